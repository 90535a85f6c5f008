"""MCP 2026-07-28 on the same endpoint: what each message of a request of this revision
must carry, checked before its method runs (the methods are in ``modern_methods``).

A request is of this revision when its ``MCP-Protocol-Version`` header names it (the
endpoint decides). There is no ``initialize`` and no session to open: every message carries
the envelope in ``params._meta`` (protocol version and client capabilities, required; client
info and log level, optional), and the routing headers ``Mcp-Method`` and ``Mcp-Name`` (and a
tool's ``Mcp-Param-*``) repeat what the body says, for intermediaries that route on them.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any

from frontdesk.companies.catalog import ServedTool
from frontdesk.protocol import methods, param_headers
from frontdesk.protocol.context import ModernRequest
from frontdesk.protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    HeaderMismatch,
    InvalidParams,
)
from frontdesk.protocol.jsonrpc import Message
from frontdesk.protocol.versions import MODERN_VERSION

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

METHOD_HEADER = b"mcp-method"
NAME_HEADER = b"mcp-name"
# A routing header sent twice is refused: a reader of the first copy and a reader of the
# last would route the request differently.
ROUTING_HEADERS = frozenset({b"mcp-protocol-version", METHOD_HEADER, NAME_HEADER})
# The params field each method's Mcp-Name header repeats.
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

# The revision's HTTP status for a request answered with one error; other codes keep 200.
STATUS_BY_CODE = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

_BASE64_OPEN, _BASE64_CLOSE = "=?base64?", "?="


def modern_request(
    raw_headers: Sequence[tuple[bytes, bytes]],
    headers: dict[bytes, bytes],
    fresh_for: Callable[[str], float],
) -> ModernRequest:
    """What the request's routing headers say, read once for all its messages."""
    # ``headers`` keeps one value a name: fewer entries than were sent means some header
    # came twice, and only then is any routing header worth counting.
    if len(headers) != len(raw_headers):
        _refuse_repeated_routing_headers(raw_headers)
    return ModernRequest(
        headers.get(METHOD_HEADER), headers.get(NAME_HEADER), raw_headers, fresh_for
    )


def admit_batch(
    request: ModernRequest, messages: Sequence[Message], tools: dict[str, ServedTool]
) -> None:
    """Refuse a batch (interface 2.9) holding a request the routing headers do not describe.

    The revision requires Mcp-Method on every request, and Mcp-Name and a tool's
    Mcp-Param-* where the method names something, for intermediaries that route and set
    policy on them; a server must reject a request whose headers disagree with its body
    (Streamable HTTP, "Server Validation"). One set of headers names one method, so each
    member is held to them as a single request is, and one that differs refuses the whole
    batch (400, -32020, its id) before any member runs: an intermediary never lets through
    a call it did not see named. Notifications run nothing and are not checked.
    """
    for message in messages:
        if message.is_notification:
            continue
        try:
            _check_headers(request, message, tools)
        except HeaderMismatch as mismatch:
            mismatch.request_id = message.id
            raise


def _refuse_repeated_routing_headers(raw_headers: Sequence[tuple[bytes, bytes]]) -> None:
    seen: set[bytes] = set()
    for header, _value in raw_headers:
        if header in ROUTING_HEADERS:
            if header in seen:
                raise HeaderMismatch(f"The {header.decode()} header appears more than once")
            seen.add(header)


def _sent_as_is(raw: bytes, value: str) -> bool:
    """Whether a routing header is ``value`` exactly as sent, the usual case (an ASCII
    value with no whitespace or base64 around it)."""
    return raw == value.encode() and value.isascii()


def _header_text(raw: bytes, header: str) -> str:
    """A routing header's value, without the whitespace around it (RFC 9110 5.5) and
    unwrapped when the client base64-encoded it (``=?base64?...?=``, MCP 2026-07-28
    transports: how a value that is not plain ASCII travels)."""
    try:
        value = raw.strip(b" \t").decode("ascii")
    except UnicodeDecodeError:
        raise HeaderMismatch(f"The {header} header must be ASCII") from None
    if not (value.startswith(_BASE64_OPEN) and value.endswith(_BASE64_CLOSE)):
        return value
    payload = value[len(_BASE64_OPEN) : -len(_BASE64_CLOSE)]
    try:
        decoded = base64.b64decode(payload, validate=True)
        # Only the canonical encoding: two spellings of one value could be routed apart.
        if base64.b64encode(decoded).decode("ascii") != payload:
            raise ValueError(payload)
        return decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        raise HeaderMismatch(f"The {header} header holds malformed base64") from None


def admit(request: ModernRequest, message: Message, tools: dict[str, ServedTool]) -> None:
    """Refuse a message whose envelope or routing headers are not as the revision requires,
    checked in its order: the envelope's presence, then each header against the body (a
    tool's Mcp-Param-* headers too), then the envelope's values."""
    meta: Any = message.params.get("_meta")
    # The usual message passes in one test; any other is told exactly what is wrong.
    envelope_ok = (
        type(meta) is dict
        and meta.get(PROTOCOL_VERSION_KEY) == MODERN_VERSION
        and type(meta.get(CLIENT_CAPABILITIES_KEY)) is dict
    )
    if not envelope_ok:
        _check_envelope(meta)
    _check_headers(request, message, tools)
    if not envelope_ok:
        raise InvalidParams(f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object")
    client_info = meta.get(CLIENT_INFO_KEY)
    if client_info is not None and type(client_info) is not dict:
        raise InvalidParams(f"Invalid params: {CLIENT_INFO_KEY} must be an object")
    level = meta.get(LOG_LEVEL_KEY)
    # Checked, though no log message is ever sent (the capabilities say so).
    if level is not None and (type(level) is not str or level not in methods.LOG_LEVELS):
        raise InvalidParams(
            f"Invalid params: {LOG_LEVEL_KEY} must be one of {sorted(methods.LOG_LEVELS)}"
        )


def _check_envelope(meta: Any) -> None:
    """Refuse an envelope that is missing or names another version."""
    if type(meta) is not dict:
        raise InvalidParams(
            f"Invalid params: params._meta must be an object holding {PROTOCOL_VERSION_KEY}"
            f" and {CLIENT_CAPABILITIES_KEY}"
        )
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise InvalidParams(f"Invalid params: params._meta lacks {' and '.join(missing)}")
    # The endpoint routes here only a request whose header names this revision.
    if meta[PROTOCOL_VERSION_KEY] != MODERN_VERSION:
        raise HeaderMismatch(
            "The MCP-Protocol-Version header does not match the protocol version in params._meta"
        )


def _check_headers(request: ModernRequest, message: Message, tools: dict[str, ServedTool]) -> None:
    """Mcp-Method and Mcp-Name, and for a tools/call the tool's Mcp-Param-* headers."""
    _check_routing(request, message)
    if message.method == "tools/call":
        name = message.params.get("name")
        tool = tools.get(name) if type(name) is str else None
        # An unknown tool is refused by tools/call itself; most tools declare no header.
        if tool is not None and tool.param_headers:
            _check_param_headers(request, message.params, tool)


def _check_routing(request: ModernRequest, message: Message) -> None:
    method = message.method
    sent = request.method
    if sent is None:
        raise HeaderMismatch("The Mcp-Method header is missing")
    if not (_sent_as_is(sent, method) or _header_text(sent, "Mcp-Method") == method):
        raise HeaderMismatch("The Mcp-Method header does not match the method in the body")
    field = NAME_FIELDS.get(method)
    if field is None:
        return
    value = message.params.get(field)
    if type(value) is not str:
        # Nothing to repeat: the method itself refuses the missing field.
        return
    sent = request.name
    if sent is None:
        raise HeaderMismatch(f"The Mcp-Name header is missing (params.{field} is set)")
    if not (_sent_as_is(sent, value) or _header_text(sent, "Mcp-Name") == value):
        raise HeaderMismatch(f"The Mcp-Name header does not match params.{field}")


def _check_param_headers(request: ModernRequest, params: dict[str, Any], tool: ServedTool) -> None:
    param_headers.check(
        tool.param_headers,
        params.get("arguments"),
        param_headers.sent(request.raw_headers),
        _header_text,
    )
