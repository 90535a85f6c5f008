"""MCP 2026-07-28 on the same endpoint: a request is of this revision when its
``MCP-Protocol-Version`` header names it. There is no ``initialize`` and no session to
open: every message carries the envelope in ``params._meta`` (``envelope``), and the
routing headers ``Mcp-Method`` and ``Mcp-Name`` (and a tool's ``Mcp-Param-*``) repeat what
the body says, for intermediaries that route on them; both are checked before a method
runs. The core's methods with ``server/discover``, less ``initialize``, ``ping``,
``logging/setLevel`` and the subscriptions (answered as unknown methods); every result
carries ``resultType`` and the server's info in ``_meta``, and what may be cached its
``cacheScope`` and ``ttlMs``, all added in ``shape``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from frontdesk.companies.catalog import ServedCompany, ServedTool
from frontdesk.protocol import core, envelope, param_headers
from frontdesk.protocol.asking import InputRequiredResult
from frontdesk.protocol.context import Handler, RequestContext, RoutedRequest
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
    ResourceNotFound,
)
from frontdesk.protocol.jsonrpc import Body, Message, Result
from frontdesk.protocol.params import LOG_LEVELS
from frontdesk.protocol.versions import ALL_VERSIONS, MODERN_VERSION

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
COMPLETE = "complete"
INPUT_REQUIRED = "input_required"

# Honest, as in the handshake revisions: nothing changes under a client, since this
# endpoint never streams, and no logging, since no log message is ever sent.
CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
}

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


def _routed_request(
    raw_headers: Sequence[tuple[bytes, bytes]],
    headers: dict[bytes, bytes],
    fresh_for: Callable[[str], float],
) -> RoutedRequest:
    """What the request's routing headers say, read once for all its messages."""
    # ``headers`` keeps one value a name: fewer entries than were sent means some header
    # came twice, and only then is any routing header worth counting.
    if len(headers) != len(raw_headers):
        _refuse_repeated_routing_headers(raw_headers)
    return RoutedRequest(
        headers.get(METHOD_HEADER), headers.get(NAME_HEADER), raw_headers, fresh_for
    )


def _admit_batch(
    request: RoutedRequest, messages: Sequence[Message], tools: dict[str, ServedTool]
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


def _check_headers(request: RoutedRequest, message: Message, tools: dict[str, ServedTool]) -> None:
    """Mcp-Method and Mcp-Name, and for a tools/call the tool's Mcp-Param-* headers."""
    _check_routing(request, message)
    if message.method == "tools/call":
        name = message.params.get("name")
        tool = tools.get(name) if type(name) is str else None
        # An unknown tool is refused by tools/call itself; most tools declare no header.
        if tool is not None and tool.param_headers:
            _check_param_headers(request, message.params, tool)


def _check_routing(request: RoutedRequest, message: Message) -> None:
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


def _check_param_headers(request: RoutedRequest, params: dict[str, Any], tool: ServedTool) -> None:
    param_headers.check(
        tool.param_headers,
        params.get("arguments"),
        param_headers.sent(request.raw_headers),
        _header_text,
    )


async def server_discover(context: RequestContext, _params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(ALL_VERSIONS),
        "capabilities": CAPABILITIES,
    }
    instructions = context.company.definition.instructions
    if instructions:
        result["instructions"] = instructions
    return result


async def resources_read(context: RequestContext, params: dict[str, Any]) -> Result:
    try:
        return await core.resources_read(context, params)
    except ResourceNotFound as error:
        # This revision retired -32002: an unknown URI is invalid params, naming the URI.
        raise InvalidParams("Resource not found", data=error.data) from None


def _ttl_ms(context: RequestContext) -> int:
    """How long this instance serves the company as it is, in milliseconds: it keeps the
    company that long before reading it again (``FRONTDESK_COMPANY_CACHE_SECONDS``)."""
    routed = context.routed
    return 0 if routed is None else int(routed.fresh_for(context.company.tenant_key) * 1000)


_SHARING: dict[str, core.Sharing] = {**core.SHARING, "server/discover": core.always_shared}
# This revision's listings: each tool also names its version (companies.catalog).
_LISTING_JSON: dict[str, Callable[[ServedCompany], bytes]] = {
    **core.LISTING_JSON,
    "tools/list": lambda company: company.versioned_tools_json,
}


METHODS: dict[str, Handler] = {
    "server/discover": server_discover,
    **core.METHODS,
    "resources/read": resources_read,
}


class Revision20260728:
    def __init__(self) -> None:
        self.versions: tuple[str, ...] = (MODERN_VERSION,)
        self.methods: Mapping[str, Handler] = METHODS

    def admit_request(
        self,
        raw_headers: Sequence[tuple[bytes, bytes]],
        headers: dict[bytes, bytes],
        body: Body,
        company: ServedCompany,
        fresh_for: Callable[[str], float],
    ) -> RoutedRequest | None:
        routed = _routed_request(raw_headers, headers, fresh_for)
        if body.is_batch:
            # Refused whole when the routing headers do not name every member.
            _admit_batch(routed, body.messages, company.tools)
        return routed

    def admit(self, context: RequestContext, message: Message) -> Handler | None:
        """Refuse a message whose envelope or routing headers are not as the revision
        requires, checked in its order: the envelope's presence, then each header against
        the body (a tool's Mcp-Param-* headers too), then the envelope's values; then
        its method's handler."""
        meta: Any = message.params.get("_meta")
        # The usual message passes in one test; any other is told exactly what is wrong.
        well_formed = (
            type(meta) is dict
            and meta.get(envelope.PROTOCOL_VERSION_KEY) == MODERN_VERSION
            and type(meta.get(envelope.CLIENT_CAPABILITIES_KEY)) is dict
        )
        if not well_formed:
            envelope.refuse_missing(meta, MODERN_VERSION)
        routed = context.routed
        assert routed is not None  # admit_request gave it
        _check_headers(routed, message, context.company.tools)
        if not well_formed:
            raise InvalidParams(
                f"Invalid params: {envelope.CLIENT_CAPABILITIES_KEY} must be an object"
            )
        client_info = meta.get(envelope.CLIENT_INFO_KEY)
        if client_info is not None and type(client_info) is not dict:
            raise InvalidParams(f"Invalid params: {envelope.CLIENT_INFO_KEY} must be an object")
        level = meta.get(envelope.LOG_LEVEL_KEY)
        # Checked, though no log message is ever sent (the capabilities say so).
        if level is not None and (type(level) is not str or level not in LOG_LEVELS):
            raise InvalidParams(
                f"Invalid params: {envelope.LOG_LEVEL_KEY} must be one of {sorted(LOG_LEVELS)}"
            )
        return METHODS.get(message.method)

    def client_capabilities(self, params: dict[str, Any]) -> dict[str, Any] | None:
        # Admitted above: the envelope is there and its capabilities are an object.
        capabilities: dict[str, Any] = params["_meta"][envelope.CLIENT_CAPABILITIES_KEY]
        return capabilities

    def shape(self, context: RequestContext, message: Message, result: Result) -> Result:
        """Every result says whether it is complete or asks first, and who answers (servers
        SHOULD say so on every result); one the same for every caller of the company says
        for how long any cache may share it, and any other that it is private."""
        company = context.company
        method = message.method
        if isinstance(result, orjson.Fragment):
            # A listing rendered when the company was loaded: both are JSON objects, so the
            # listing's closing brace gives way to this revision's members.
            fields = orjson.dumps(
                {
                    "resultType": COMPLETE,
                    "cacheScope": "public",
                    "ttlMs": _ttl_ms(context),
                    "_meta": company.server_info_meta,
                }
            )
            listing = _LISTING_JSON[method](company)
            return orjson.Fragment(b"".join((listing[:-1], b",", fields[1:])))
        result["resultType"] = INPUT_REQUIRED if type(result) is InputRequiredResult else COMPLETE
        sharing = _SHARING.get(method)
        if sharing is not None:
            shared = sharing(context, message.params)
            result["cacheScope"] = "public" if shared else "private"
            result["ttlMs"] = _ttl_ms(context) if shared else 0
        meta = result.get("_meta")
        result["_meta"] = (
            company.server_info_meta
            if meta is None
            else {**meta, SERVER_INFO_KEY: company.server_info}
        )
        return result

    def status(self, reply: dict[str, Any]) -> int:
        """The revision gives one request's error an HTTP status of its own."""
        error = reply.get("error")
        return 200 if error is None else STATUS_BY_CODE.get(error["code"], 200)


REVISION = Revision20260728()
