"""A company's parts under /admin/v1/companies/{tenant}: its tools one by one, its
sign-in settings and its branding. Each change rewrites the company's definition in one
transaction, validated whole (administration.company_documents), so a tool, sign-in or branding
that would make the company invalid is refused and nothing is written."""

from __future__ import annotations

import copy
from typing import Any

from starlette.responses import Response

from frontdesk.admin_api import writing
from frontdesk.admin_api.errors import AdminError, invalid_request
from frontdesk.admin_api.guard import AdminCall, json_response
from frontdesk.administration import company_documents
from frontdesk.administration.company_documents import Reading
from frontdesk.administration.company_state import UnknownTarget


def _tool_name(call: AdminCall) -> str:
    return str(call.request.path_params["name"])


def _find(tools: list[dict[str, Any]], name: str) -> int | None:
    return next((index for index, tool in enumerate(tools) if tool.get("name") == name), None)


async def list_tools(call: AdminCall) -> Response:
    document = await company_documents.read_redacted(call.context.companies, call.company)
    return json_response({"tools": document.get("tools", [])})


async def get_tool(call: AdminCall) -> Response:
    document = await company_documents.read_redacted(call.context.companies, call.company)
    tools = document.get("tools", [])
    index = _find(tools, _tool_name(call))
    if index is None:
        raise UnknownTarget(f"company {call.company!r} has no tool {_tool_name(call)!r}")
    return json_response(tools[index])


async def put_tool(call: AdminCall) -> Response:
    """Create (201) or replace (200) the tool the path names."""
    tool = await call.json_body()
    name = _tool_name(call)
    if not isinstance(tool, dict):
        raise invalid_request("a tool is a JSON object")
    if tool.setdefault("name", name) != name:
        raise AdminError(
            422,
            "invalid_company",
            "the tool is not valid",
            problems=[("name", f"must be {name!r}, as in the path")],
        )
    current = await company_documents.read_opened(call.context.companies, call.company)
    document = copy.deepcopy(current.document)
    tools = list(document.get("tools", []))
    index = _find(tools, name)
    if index is None:
        tools.append(tool)
    else:
        tools[index] = tool
    document["tools"] = tools
    written = await _write(call, document, current)
    [stored] = [item for item in written["tools"] if item["name"] == name]
    return json_response(stored, 201 if index is None else 200)


async def delete_tool(call: AdminCall) -> Response:
    name = _tool_name(call)
    current = await company_documents.read_opened(call.context.companies, call.company)
    tools = list(current.document.get("tools", []))
    index = _find(tools, name)
    if index is None:
        raise UnknownTarget(f"company {call.company!r} has no tool {name!r}")
    del tools[index]
    await _write(call, {**current.document, "tools": tools}, current)
    return Response(status_code=204, headers={"Cache-Control": "no-store"})


def _part(field: str) -> tuple[Any, Any]:
    """GET and PUT of one top-level part of the definition (``signin``, ``branding``)."""

    async def get(call: AdminCall) -> Response:
        document = await company_documents.read_redacted(call.context.companies, call.company)
        if document.get(field) is None:
            raise UnknownTarget(f"company {call.company!r} has no {field} set")
        return json_response(document[field])

    async def put(call: AdminCall) -> Response:
        part = await call.json_body()
        if not isinstance(part, dict):
            raise invalid_request(f"the company's {field} is a JSON object")
        current = await company_documents.read_opened(call.context.companies, call.company)
        written = await _write(call, {**current.document, field: part}, current)
        return json_response(written[field])

    return get, put


get_signin, put_signin = _part("signin")
get_branding, put_branding = _part("branding")


async def _write(call: AdminCall, document: dict[str, Any], current: Reading) -> dict[str, Any]:
    """Written only if the company is still as ``current`` read it (admin_api.writing)."""
    return (await writing.write(call, document, current.document, current.revision)).document
