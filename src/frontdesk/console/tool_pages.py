"""The console's tools page: each tool of the company with its access and annotations,
which staff may change; a switch that stops serving a tool (``enabled: false``) or serves
it again; and a test call, run as a guest through the MCP endpoint (console.test_call).

Annotations are shown and edited as their effective values, MCP's defaults filled in
(``ToolAnnotations``: readOnlyHint false, destructiveHint true, idempotentHint false,
openWorldHint true), so saving a tool unchanged keeps what clients are told, and an edit
writes all four explicitly.
"""

from __future__ import annotations

from typing import Any

import orjson
import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from frontdesk.console import shown
from frontdesk.console.changes import stored_definition
from frontdesk.console.company_pages import CompanyPages
from frontdesk.console.session import ConsoleSession
from frontdesk.console.test_call import call_as_guest, shown_result
from frontdesk.oauth.errors import AuthorizePage

log = structlog.get_logger(__name__)

MAX_ARGUMENTS_BYTES = 64 * 1024
# The form's checkbox of each hint.
HINT_FIELDS = {
    "readOnlyHint": "read_only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open_world",
}


def _unknown_tool() -> AuthorizePage:
    return AuthorizePage(404, "Not found", "This company has no such tool.")


class ToolPages:
    def __init__(self, pages: CompanyPages) -> None:
        self._pages = pages

    async def tools(
        self, request: Request, current: ConsoleSession, tenant_key: str, **extra: Any
    ) -> Response:
        definition = await stored_definition(self._pages.services, tenant_key)
        tools = [shown.tool_row(tool) for tool in definition.get("tools", [])]
        extra.setdefault("arguments", "{}")
        return await self._pages.page(
            request,
            current,
            tenant_key,
            "console_tools.html",
            section="tools",
            tools=tools,
            **extra,
        )

    async def switch(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        form = self._pages.form(request)
        name, enabled = form.get("tool", ""), form.get("enabled") == "true"

        def switch(document: dict[str, Any]) -> None:
            _tool(document, name)["enabled"] = enabled

        await self._pages.change(
            current, tenant_key, switch, "tool_enabled" if enabled else "tool_disabled", tool=name
        )
        log.info("console_tool_switched", tenant=tenant_key, tool=name, enabled=enabled)
        return self._pages.back(tenant_key, "tools")

    async def edit(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        """Its access and its annotations' four hints, as the form sets them."""
        form = self._pages.form(request)
        name = form.get("tool", "")

        def edit(document: dict[str, Any]) -> None:
            tool = _tool(document, name)
            # An access the definition does not know is refused by its validation.
            tool["access"] = form.get("access", "")
            hints = {hint: form.get(field) == "on" for hint, field in HINT_FIELDS.items()}
            # A title too, where a tool stored before all five were required has none
            # (companies.tool_terms): otherwise its edit would be refused for it.
            given = {k: v for k, v in (tool.get("annotations") or {}).items() if v is not None}
            titled = {"title": tool.get("title") or name}
            tool["annotations"] = {**titled, **given, **hints}

        await self._pages.change(current, tenant_key, edit, "tool_edited", tool=name)
        return self._pages.back(tenant_key, "tools")

    async def test(self, request: Request, current: ConsoleSession, tenant_key: str) -> Response:
        form = self._pages.form(request)
        name, text = form.get("tool", ""), form.get("arguments", "").strip() or "{}"
        try:
            arguments = orjson.loads(text) if len(text) <= MAX_ARGUMENTS_BYTES else None
        except orjson.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            return await self.tools(
                request,
                current,
                tenant_key,
                arguments=text,
                problem='The arguments must be a JSON object, e.g. {"text": "hello"}.',
                status=400,
            )
        status, reply = await call_as_guest(
            self._pages.services.mcp, request.scope, tenant_key, name, arguments
        )
        result = shown_result(name, status, reply)
        return await self.tools(request, current, tenant_key, arguments=text, result=result)


def _tool(document: dict[str, Any], name: str) -> dict[str, Any]:
    for tool in document.get("tools", []):
        if tool["name"] == name:
            found: dict[str, Any] = tool
            return found
    raise _unknown_tool()


def tool_routes(pages: CompanyPages) -> list[Route]:
    tools = ToolPages(pages)
    opened = pages.opened
    base = "/console/{tenant}/tools"
    return [
        Route(base, opened(tools.tools), methods=["GET"]),
        Route(f"{base}/switch", opened(tools.switch, form=True), methods=["POST"]),
        Route(f"{base}/edit", opened(tools.edit, form=True), methods=["POST"]),
        Route(f"{base}/test", opened(tools.test, form=True), methods=["POST"]),
    ]
