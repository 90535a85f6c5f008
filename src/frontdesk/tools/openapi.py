"""The ``openapi`` provider: a tool that is one operation of the company's own REST API.

Each call is the HTTP request the operation describes, made to the API's base URL through
the shared backend client (outbound.OutboundClients: address policy at connect time, no
redirects, no proxies) with the same lanes, time bound and 1 MiB cap on the decoded answer
as the ``http`` provider:

- Path parameters are percent-encoded whole (RFC 3986 3.3: a ``/`` or a dot segment in an
  argument cannot move the call to another path); query parameters are added in the form
  OpenAPI's default style (``form``, exploded: an array is the name repeated); header
  parameters are set as given, and refused if they hold a line break. The ``body``
  argument, when the operation takes one, is sent as JSON.
- A signed-in customer's call (every call of a personal tool) carries ``Authorization:
  Bearer <JWT>`` signed for the company (``identity``, see frontdesk.tools.identity_tokens), so
  the API checks who is calling with a standard JWT library; a guest's call carries none.
- A 2xx JSON object becomes ``structuredContent`` and a text block of the same JSON; other
  JSON, or text, a text block. A 4xx or 5xx becomes an ``isError`` result carrying the
  API's own message (a problem+json ``title``/``detail`` (RFC 9457), a JSON ``message``,
  ``error`` or ``detail``, or the start of a text answer); a redirect, an unreadable or
  oversized answer, or an unreachable API an ``isError`` result naming the tool, the detail
  logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import orjson
import structlog

from frontdesk import __version__
from frontdesk.limits.json_nesting import MAX_NESTING, may_nest_deeper, nests_deeper
from frontdesk.tools.exchange import exchange
from frontdesk.tools.http import ACCEPT_ENCODING, CONNECTIONS_PER_BACKEND
from frontdesk.tools.identity import IdentityMinter
from frontdesk.tools.provider import ToolAnswer, ToolCall, ToolError, ToolResult

log = structlog.get_logger(__name__)

USER_AGENT = f"Frontdesk/{__version__} (tool call)"
# How much of an API's error message is passed on: enough to say what was wrong.
MAX_MESSAGE_CHARACTERS = 300
BODY_ARGUMENT = "body"


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    location: str  # "path", "query" or "header"
    argument: str


@dataclass(frozen=True, slots=True)
class Operation:
    base_url: str
    method: str
    path: str
    parameters: tuple[Parameter, ...]
    body: bool
    audience: str


class OpenApiToolProvider:
    def __init__(
        self,
        operation: Operation,
        http: httpx.AsyncClient,
        lane: asyncio.Semaphore | None = None,
        identity: IdentityMinter | None = None,
    ) -> None:
        self._operation = operation
        self._http = http
        # Shared by every tool of the same API (ProviderFactory hands it out).
        self._lane = lane or asyncio.Semaphore(CONNECTIONS_PER_BACKEND)
        self._identity = identity

    async def call(self, call: ToolCall) -> ToolAnswer:
        operation = self._operation
        url, headers, content = request_for(operation, call.tool, call.arguments)
        headers["accept"] = "application/json, text/plain;q=0.5"
        headers["accept-encoding"] = ACCEPT_ENCODING
        headers["user-agent"] = USER_AGENT
        customer = call.customer
        if customer is not None:
            # Every signed-in call says who is calling; a personal tool is only ever called
            # signed in (protocol.tool_calls refuses a guest).
            if self._identity is None:
                raise ToolError(f"{call.tool} is unavailable right now.", "unavailable")
            token = await self._identity.mint(
                call.tenant_key, operation.audience, customer, call.client_id, customer.scopes
            )
            headers["authorization"] = f"Bearer {token}"
        status, media_type, raw = await exchange(
            self._http,
            self._lane,
            call.tool,
            operation.method,
            url,
            content=content,
            headers=headers,
        )
        return answer_for(call.tool, status, media_type, raw)


def request_for(
    operation: Operation, tool: str, arguments: Mapping[str, Any]
) -> tuple[str, dict[str, str], bytes | None]:
    """The URL, headers and body of the operation's request for ``arguments``; ToolError
    when an argument cannot be sent as its parameter."""
    path = operation.path
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    for parameter in operation.parameters:
        if parameter.argument not in arguments:
            if parameter.location == "path":
                raise ToolError(f"{tool} needs the argument {parameter.argument!r}.")
            continue
        value = arguments[parameter.argument]
        if parameter.location == "path":
            path = path.replace("{" + parameter.name + "}", _path_segment(_text(value)))
        elif parameter.location == "query":
            values = value if isinstance(value, list) else [value]
            query.extend((parameter.name, _text(item)) for item in values if item is not None)
        else:
            text = ",".join(_text(item) for item in value) if isinstance(value, list) else None
            text = _text(value) if text is None else text
            if any(character in text for character in "\r\n\0"):
                raise ToolError(f"{tool}: {parameter.argument!r} cannot hold a line break.")
            headers[parameter.name] = text
    url = operation.base_url + path
    if query:
        url += "?" + urlencode(query, quote_via=quote)
    content = None
    if operation.body and BODY_ARGUMENT in arguments:
        content = orjson.dumps(arguments[BODY_ARGUMENT])
        headers["content-type"] = "application/json"
    return url, headers, content


def _text(value: Any) -> str:
    """A parameter's value as OpenAPI's simple and form styles write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    # Numbers as JSON writes them; an object (no style for it is imported) as its JSON.
    return orjson.dumps(value).decode()


def _path_segment(text: str) -> str:
    # Every reserved character encoded (quote with safe=""), and a dot segment too: httpx
    # removes "." and ".." segments from a path (RFC 3986 5.2.4) before sending it.
    if text in (".", ".."):
        return "%2E" * len(text)
    return quote(text, safe="")


def answer_for(tool: str, status: int, media_type: str, raw: bytes) -> ToolResult:
    """The tool result for the API's answer (see the module's docstring)."""
    kind = media_type.partition(";")[0].strip().lower()
    if 300 <= status < 400:
        log.warning("tool_backend_redirected", tool=tool, status=status)
        raise ToolError(f"{tool} failed (its service answered HTTP {status}, a redirect).")
    document = _json(tool, raw) if raw and _is_json(kind) else None
    if status >= 400:
        message = _error_message(document) if document is not None else _short_text(kind, raw)
        said = f": {message}" if message else ""
        return ToolResult.text(f"{tool} failed (HTTP {status}){said}", is_error=True)
    if isinstance(document, dict):
        text = orjson.dumps(document).decode()
        return ToolResult(content=[{"type": "text", "text": text}], structured=document)
    if document is not None:
        return ToolResult.text(orjson.dumps(document).decode())
    if raw and kind.startswith("text/"):
        return ToolResult.text(raw.decode("utf-8", errors="replace"))
    if raw:
        return ToolResult.text(f"{tool} answered {len(raw)} bytes of {kind or 'data'}.")
    return ToolResult.text(f"{tool} succeeded (HTTP {status}).")


def _is_json(kind: str) -> bool:
    # RFC 6839 3.1: application/<name>+json is JSON too (problem+json among them).
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


def _json(tool: str, raw: bytes) -> Any:
    try:
        document = orjson.loads(raw)
        if may_nest_deeper(raw) and nests_deeper(document):
            raise ValueError(f"the answer nests more than {MAX_NESTING} levels deep")
    except (orjson.JSONDecodeError, ValueError) as error:
        log.warning("tool_backend_malformed", tool=tool, error=str(error))
        raise ToolError(f"{tool} answered in a form Frontdesk cannot read.") from None
    return document


def _error_message(document: Any) -> str:
    """The API's own words for what went wrong: RFC 9457's title and detail, or the
    ``message``, ``error`` or ``detail`` most APIs answer with."""
    if not isinstance(document, dict):
        return ""
    parts: list[str] = []
    for key in ("title", "detail", "message", "error_description"):
        value = document.get(key)
        if isinstance(value, str) and value not in parts:
            parts.append(value)
    error = document.get("error")
    if isinstance(error, dict):
        parts.append(_error_message(error))
    elif isinstance(error, str) and error not in parts:
        parts.append(error)
    return _shortened(" ".join(part for part in parts if part))


def _short_text(kind: str, raw: bytes) -> str:
    if not raw or not kind.startswith("text/") or kind == "text/html":
        return ""
    return _shortened(raw.decode("utf-8", errors="replace"))


def _shortened(text: str) -> str:
    # One line, printable: an error page must not pass on control characters.
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(flat) > MAX_MESSAGE_CHARACTERS:
        return flat[: MAX_MESSAGE_CHARACTERS - 1] + "…"
    return flat
