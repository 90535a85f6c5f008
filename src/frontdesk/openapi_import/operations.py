"""Each operation of a validated OpenAPI document as a tool of the ``openapi`` provider.

- **Name**: the ``operationId``, its characters outside MCP's tool-name alphabet replaced by
  ``_`` and cut to 128; without one, the method and path (``get_orders_orderId``). A name
  taken by an earlier operation gets ``_2``, ``_3``...
- **Title and description**: the summary, and the description (or the summary, or the
  method and path when the operation has neither).
- **Arguments** (``inputSchema``): the path, query and header parameters, each under its own
  name (a name used twice, in two places, becomes ``<in>_<name>``), and the JSON request
  body under ``body``: kept apart, so a body property can never be mistaken for a
  parameter. Cookie parameters and an ``Authorization`` header are left out (the first is
  a browser's, the second Frontdesk's); an operation that requires one, or a body that is
  not JSON, is refused, naming it.
- **outputSchema**: the JSON schema of the first 2xx answer, when it is an object schema
  (MCP's structured content is an object).
- **Annotations**, all five (companies.tool_terms), from the method (RFC 9110 9.2: GET and
  HEAD are safe, PUT and DELETE idempotent): GET/HEAD read-only, DELETE destructive, PUT
  idempotent, every operation open-world (it reaches the company's service), titled as
  the tool; the operation's ``x-frontdesk: {annotations: {...}}`` or the import's
  overrides (by operationId or tool name) win.
- **Access**: personal when the operation (or, without its own, the document) requires
  security, an empty requirement (``{}``) making it optional; public otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from frontdesk.companies.provider_definitions import (
    BODY_ARGUMENT,
    METHODS,
    RESERVED_HEADERS,
)
from frontdesk.openapi_import import ImportRefused
from frontdesk.openapi_import.schemas import SchemaConverter

MAX_TOOL_NAME = 128
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_ANNOTATIONS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def method_annotations(method: str) -> dict[str, bool]:
    """All four hints a method implies (a companies file must give every one,
    companies.tool_terms). RFC 9110 9.2: GET and HEAD are safe, PUT and DELETE idempotent;
    only DELETE is taken to destroy. Every operation calls the company's own service, which
    answers from the world outside Frontdesk: openWorldHint."""
    read_only = method in ("GET", "HEAD")
    return {
        "readOnlyHint": read_only,
        "destructiveHint": method == "DELETE",
        "idempotentHint": read_only or method in ("PUT", "DELETE"),
        "openWorldHint": True,
    }


def tools_of(
    document: dict[str, Any],
    converter: SchemaConverter,
    *,
    base_url: str,
    source: str,
    include: Sequence[str] = (),
    annotations: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The tools, in the document's order; only the operations ``include`` names (by
    operationId or tag) when it names any."""
    wanted = set(include)
    matched: set[str] = set()
    tools: list[dict[str, Any]] = []
    names: set[str] = set()
    global_security = document.get("security")
    for path, method, operation, shared in _operations(document, converter):
        operation_id = operation.get("operationId")
        tags = [tag for tag in operation.get("tags", []) if isinstance(tag, str)]
        if wanted:
            hits = wanted & {*tags, *([operation_id] if isinstance(operation_id, str) else [])}
            if not hits:
                continue
            matched |= hits
        where = f"{method} {path}" + (f" ({operation_id})" if operation_id else "")
        name = _unique_name(_tool_name(operation_id, method, path), names)
        tool = _tool(name, path, method, operation, shared, converter, where, base_url, source)
        security = operation.get("security", global_security)
        personal = isinstance(security, list) and bool(security) and {} not in security
        tool["access"] = "personal" if personal else "public"
        # MCP's title: the tool's own (the summary), else its name.
        chosen: dict[str, Any] = {"title": tool.get("title", name), **method_annotations(method)}
        extension = operation.get("x-frontdesk")
        if isinstance(extension, dict) and isinstance(extension.get("annotations"), dict):
            chosen.update(extension["annotations"])
        override = (annotations or {}).get(operation_id or "") or (annotations or {}).get(name)
        if override:
            chosen.update(override)
        unknown = sorted(set(chosen) - set(_ANNOTATIONS))
        if unknown:
            raise ImportRefused(f"{where}: unknown annotations {unknown}")
        tool["annotations"] = chosen
        tools.append(tool)
    missing = sorted(wanted - matched)
    if missing:
        raise ImportRefused(f"no operation has the operationId or tag {missing}")
    return tools


def _operations(
    document: dict[str, Any], converter: SchemaConverter
) -> Iterator[tuple[str, str, dict[str, Any], list[Any]]]:
    """Each (path, METHOD, operation, the path item's parameters)."""
    for path, item in (document.get("paths") or {}).items():
        item = converter.resolve(item)
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters", [])
        for method in METHODS:
            operation = item.get(method.lower())
            if isinstance(operation, dict):
                yield path, method, operation, shared


def _tool_name(operation_id: Any, method: str, path: str) -> str:
    base = operation_id if isinstance(operation_id, str) and operation_id else None
    if base is None:
        segments = [part.strip("{}") for part in path.split("/") if part]
        base = "_".join([method.lower(), *segments])
    name = _NOT_IN_NAME.sub("_", base).strip("_") or method.lower()
    return name[:MAX_TOOL_NAME]


def _unique_name(name: str, taken: set[str]) -> str:
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = name[: MAX_TOOL_NAME - len(suffix)] + suffix
    taken.add(candidate)
    return candidate


def _tool(
    name: str,
    path: str,
    method: str,
    operation: dict[str, Any],
    shared: list[Any],
    converter: SchemaConverter,
    where: str,
    base_url: str,
    source: str,
) -> dict[str, Any]:
    parameters = _parameters(shared, operation.get("parameters", []), converter, where)
    properties: dict[str, Any] = {}
    required: list[str] = []
    provided: list[dict[str, str]] = []
    counts: dict[str, int] = {}
    for parameter in parameters:
        counts[parameter["name"]] = counts.get(parameter["name"], 0) + 1
    for parameter in parameters:
        argument = parameter["name"]
        if counts[argument] > 1 or argument == BODY_ARGUMENT:
            argument = f"{parameter['in']}_{parameter['name']}"
        schema = converter.convert(parameter.get("schema", {}), f"{where}: {parameter['name']}")
        if isinstance(parameter.get("description"), str) and isinstance(schema, dict):
            schema = {**schema, "description": parameter["description"]}
        properties[argument] = schema
        if parameter.get("required") or parameter["in"] == "path":
            required.append(argument)
        entry = {"name": parameter["name"], "in": parameter["in"]}
        if argument != parameter["name"]:
            entry["argument"] = argument
        provided.append(entry)
    body = _json_body(operation, converter, where)
    if body is not None:
        schema, body_required = body
        properties[BODY_ARGUMENT] = schema
        if body_required:
            required.append(BODY_ARGUMENT)
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    summary = operation.get("summary")
    description = operation.get("description") or summary or f"{method} {path}"
    tool: dict[str, Any] = {"name": name}
    if isinstance(summary, str) and summary:
        tool["title"] = summary
    tool["description"] = description
    tool["input_schema"] = input_schema
    output = _output_schema(operation, converter, where)
    if output is not None:
        tool["output_schema"] = output
    tool["provider"] = {
        "type": "openapi",
        "source": source,
        "base_url": base_url,
        "method": method,
        "path": path,
        "parameters": provided,
        "body": body is not None,
    }
    return tool


def _parameters(
    shared: list[Any], own: list[Any], converter: SchemaConverter, where: str
) -> list[dict[str, Any]]:
    """The operation's parameters over its path item's (OpenAPI 3.1 4.8.10: by name and
    location), less those Frontdesk does not send."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for parameter in [*shared, *own]:
        resolved = converter.resolve(parameter)
        if isinstance(resolved, dict):
            merged[(resolved.get("name", ""), resolved.get("in", ""))] = resolved
    kept = []
    for (name, location), parameter in merged.items():
        not_sent = location == "cookie" or (
            location == "header" and name.lower() in RESERVED_HEADERS
        )
        if not_sent:
            if parameter.get("required") and name.lower() != "authorization":
                raise ImportRefused(
                    f"{where}: requires the {location} parameter {name!r}, which Frontdesk"
                    " does not send"
                )
            continue
        kept.append(parameter)
    return kept


def _json_body(
    operation: dict[str, Any], converter: SchemaConverter, where: str
) -> tuple[dict[str, Any] | bool, bool] | None:
    body = converter.resolve(operation.get("requestBody"))
    if not isinstance(body, dict):
        return None
    content = body.get("content") or {}
    for media_type, described in content.items():
        if _is_json(media_type) and isinstance(described, dict):
            schema = converter.convert(
                described.get("schema", {}), f"{where}: request body", leave_out="readOnly"
            )
            return schema, bool(body.get("required"))
    if body.get("required"):
        raise ImportRefused(
            f"{where}: its request body is {', '.join(content) or 'of no type'}, not JSON,"
            " which Frontdesk does not send"
        )
    return None


def _output_schema(
    operation: dict[str, Any], converter: SchemaConverter, where: str
) -> dict[str, Any] | None:
    responses = operation.get("responses") or {}
    # YAML reads a bare 200 as a number; "2XX" is a range (OpenAPI 3.1 4.8.16.2).
    for status, described_response in sorted(responses.items(), key=lambda item: str(item[0])):
        if not str(status).startswith("2"):
            continue
        response = converter.resolve(described_response)
        content = response.get("content") if isinstance(response, dict) else None
        for media_type, described in (content or {}).items():
            if _is_json(media_type) and isinstance(described, dict) and "schema" in described:
                schema = converter.convert(
                    described["schema"], f"{where}: answer", leave_out="writeOnly"
                )
                if isinstance(schema, dict) and schema.get("type") == "object":
                    return schema
                return None
        return None
    return None


def _is_json(media_type: str) -> bool:
    kind = media_type.partition(";")[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )
