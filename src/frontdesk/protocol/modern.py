"""MCP 2026-07-28 on the same endpoint: the per-request envelope and routing headers each
message is checked against, ``server/discover``, and the fields its results carry.

A request is of this revision when its ``MCP-Protocol-Version`` header names it (the
endpoint decides). There is no ``initialize`` and no session to open: every message carries
the envelope in ``params._meta`` (protocol version and client capabilities, required; client
info and log level, optional). The methods are 2025's less ``initialize``, ``ping``,
``logging/setLevel`` and the subscription pair, plus ``server/discover``; they are served by
the same handlers (``methods``) and their results completed here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

import orjson
import structlog

from frontdesk.companies.catalog import ServedTool
from frontdesk.companies.definition import Access
from frontdesk.protocol import methods, param_headers
from frontdesk.protocol.context import ModernRequest, RequestContext
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
    MissingClientCapability,
    ProviderFailed,
    ResourceNotFound,
)
from frontdesk.protocol.jsonrpc import Message, Result
from frontdesk.protocol.params import no_cursor, required_str
from frontdesk.protocol.request_state import StateBinding
from frontdesk.protocol.versions import ALL_VERSIONS, MODERN_VERSION
from frontdesk.tools.provider import ELICITATION, ROOTS, SAMPLING, InputRequired, ToolResult

log = structlog.get_logger(__name__)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

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

# Honest, as in 2025 (methods.CAPABILITIES): nothing changes under a client, since this
# endpoint never streams, and no logging, since no log message is ever sent.
CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
}

COMPLETE = "complete"
INPUT_REQUIRED = "input_required"
# The client capability each input request needs (schema ``ClientCapabilities``).
INPUT_CAPABILITIES = {ELICITATION: "elicitation", SAMPLING: "sampling", ROOTS: "roots"}
_BASE64_OPEN, _BASE64_CLOSE = "=?base64?", "?="

Json = dict[str, Any]


def modern_request(
    raw_headers: list[tuple[bytes, bytes]],
    headers: dict[bytes, bytes],
    headers_required: bool,
    ttl_ms: int,
) -> ModernRequest:
    """What the request's routing headers say, read once for all its messages."""
    seen: set[bytes] = set()
    params: dict[bytes, list[bytes]] = {}
    for header, value in raw_headers:
        if header in ROUTING_HEADERS:
            if header in seen:
                raise HeaderMismatch(f"The {header.decode()} header appears more than once")
            seen.add(header)
        elif header.startswith(param_headers.HEADER_PREFIX):
            # Only read for the tool that declares it (a repeated copy is refused then).
            params.setdefault(header, []).append(value)
    method = headers.get(METHOD_HEADER)
    name = headers.get(NAME_HEADER)
    return ModernRequest(
        None if method is None else _header_text(method, "Mcp-Method"),
        None if name is None else _header_text(name, "Mcp-Name"),
        headers_required,
        ttl_ms,
        params,
    )


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
    tool's Mcp-Param-* headers too)."""
    params = message.params
    meta = params.get("_meta")
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
    _check_routing(request, message)
    if message.method == "tools/call":
        _check_param_headers(request, message.params, tools)
    if type(meta[CLIENT_CAPABILITIES_KEY]) is not dict:
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


def _check_routing(request: ModernRequest, message: Message) -> None:
    if request.method is None:
        if request.headers_required:
            raise HeaderMismatch("The Mcp-Method header is missing")
    elif request.method != message.method:
        raise HeaderMismatch("The Mcp-Method header does not match the method in the body")
    field = NAME_FIELDS.get(message.method)
    if field is None:
        return
    value = message.params.get(field)
    if type(value) is not str:
        # Nothing to repeat: the method itself refuses the missing field.
        return
    if request.name is None:
        if request.headers_required:
            raise HeaderMismatch(f"The Mcp-Name header is missing (params.{field} is set)")
    elif request.name != value:
        raise HeaderMismatch(f"The Mcp-Name header does not match params.{field}")


def _check_param_headers(
    request: ModernRequest, params: dict[str, Any], tools: dict[str, ServedTool]
) -> None:
    name = params.get("name")
    tool = tools.get(name) if type(name) is str else None
    # An unknown tool is refused by tools/call itself; most tools declare no header.
    if tool is None or not tool.param_headers:
        return
    param_headers.check(
        tool.param_headers,
        params.get("arguments"),
        request.param_headers,
        request.headers_required,
        _header_text,
    )


def _ttl_ms(context: RequestContext) -> int:
    modern = context.modern
    return 0 if modern is None else modern.ttl_ms


def _server_meta(context: RequestContext, meta: Any = None) -> dict[str, Any]:
    """The result's ``_meta``: its own keys, and who answers (servers SHOULD say so on
    every result)."""
    if meta is None:
        return {SERVER_INFO_KEY: context.company.server_info}
    return {**meta, SERVER_INFO_KEY: context.company.server_info}


def _completed(context: RequestContext, result: dict[str, Any]) -> dict[str, Any]:
    result["resultType"] = COMPLETE
    result["_meta"] = _server_meta(context, result.get("_meta"))
    return result


def _listing(context: RequestContext, listing_json: bytes) -> orjson.Fragment:
    """A listing rendered when the company was loaded, with this revision's fields added.

    The listing is the same for every caller of the company, guest or customer (SPEC 5.5),
    so any cache may share it; it stays as it is here as long as this instance keeps the
    company before reading it again (``FRONTDESK_COMPANY_CACHE_SECONDS``).
    """
    fields = orjson.dumps(
        {
            "resultType": COMPLETE,
            "cacheScope": "public",
            "ttlMs": _ttl_ms(context),
            "_meta": _server_meta(context),
        }
    )
    # Both are JSON objects: the listing's closing brace gives way to the added members.
    return orjson.Fragment(b"".join((listing_json[:-1], b",", fields[1:])))


async def server_discover(context: RequestContext, _params: dict[str, Any]) -> dict[str, Any]:
    company = context.company
    result: dict[str, Any] = {
        "supportedVersions": list(ALL_VERSIONS),
        "capabilities": CAPABILITIES,
        "resultType": COMPLETE,
        "cacheScope": "public",
        "ttlMs": _ttl_ms(context),
        "_meta": _server_meta(context),
    }
    if company.definition.instructions:
        result["instructions"] = company.definition.instructions
    return result


async def tools_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return _listing(context, context.company.tools_json)


async def resources_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return _listing(context, context.company.resources_json)


async def resource_templates_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return _listing(context, context.company.resource_templates_json)


async def prompts_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return _listing(context, context.company.prompts_json)


async def tools_call(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A call, or a call made again with the client's answers and the requestState it was
    given; a tool that needs input first gets an input-required result."""
    tool, arguments = methods.called_tool(context, params)
    capabilities = params["_meta"][CLIENT_CAPABILITIES_KEY]
    # Before anything else: signing in or fixing the arguments would not make it callable.
    _require_capabilities(tool.name, tool.definition.required_client_capabilities, capabilities)
    input_responses = _input_responses(params)
    sealed = _sealed_state(params)
    refusal = methods.refusal_of(context, tool, arguments)
    if refusal is not None:
        return _completed(context, refusal.to_mcp())

    # Built only for a call that carries a state or asks: hashing the arguments would cost
    # every other call for nothing.
    def binding() -> StateBinding:
        return StateBinding.of(
            context.company.tenant_key, "tools/call", tool.name, arguments, context.caller
        )

    state = None if sealed is None else context.request_states.open(sealed, binding())
    answer = await methods.run_tool(
        context, tool, arguments, _input_methods(capabilities), input_responses, state
    )
    if isinstance(answer, InputRequired):
        unanswerable = _unanswerable(capabilities, answer)
        if unanswerable:
            # The revision: a server MUST NOT ask what the client did not declare it can
            # answer. The tool's own choice to ask: its call failed, told in its result.
            log.warning(
                "tool_input_unanswerable", tenant=context.company.tenant_key, tool=tool.name
            )
            return _completed(
                context,
                ToolResult.text(
                    f"{tool.name} needs to ask the customer something this client cannot"
                    f" answer ({', '.join(sorted(unanswerable))}).",
                    is_error=True,
                ).to_mcp(),
            )
        return _input_required(context, binding(), answer, f"{tool.name} answered")
    return _completed(context, answer.to_mcp())


async def prompts_get(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A prompt, or a request made again with the client's answers and the requestState it
    was given; a prompt whose builder needs input first gets an input-required result."""
    prompt, values = methods.called_prompt(context, params)
    capabilities = params["_meta"][CLIENT_CAPABILITIES_KEY]
    input_responses = _input_responses(params)
    sealed = _sealed_state(params)
    name = prompt.definition.name
    binding = StateBinding.of(
        context.company.tenant_key, "prompts/get", name, values, context.caller
    )
    state = None if sealed is None else context.request_states.open(sealed, binding)
    answer = await methods.build_prompt(
        context, prompt, values, _input_methods(capabilities), input_responses, state
    )
    if not isinstance(answer, InputRequired):
        return _completed(context, answer)
    unanswerable = _unanswerable(capabilities, answer)
    if unanswerable:
        # A prompt has no isError result: the revision's error for a request that needs
        # what the client did not declare.
        required: Json = {}
        for entry in unanswerable.values():
            required.update(entry)
        raise MissingClientCapability(
            f"The prompt {name} needs to ask the customer something this client cannot"
            f" answer ({', '.join(sorted(unanswerable))})",
            data={"requiredCapabilities": required},
        )
    return _input_required(context, binding, answer, f"The prompt {name} answered")


def _require_capabilities(tool: str, required: Sequence[str], capabilities: dict[str, Any]) -> None:
    """-32021 naming what a tool needs that the client did not declare (schema
    ``MissingRequiredClientCapabilityError``: ``data.requiredCapabilities`` is a
    ``ClientCapabilities`` object)."""
    # str(): a definition's names are StrEnum members, which orjson takes for no key.
    missing = [str(name) for name in required if type(capabilities.get(name)) is not dict]
    if missing:
        raise MissingClientCapability(
            f"{tool} needs a client that declares {', '.join(missing)}"
            f" in {CLIENT_CAPABILITIES_KEY}",
            data={"requiredCapabilities": {name: {} for name in missing}},
        )


def _sealed_state(params: dict[str, Any]) -> str | None:
    sealed = params.get("requestState")
    if sealed is not None and type(sealed) is not str:
        raise InvalidParams("Invalid params: requestState must be a string")
    return sealed


def _input_responses(params: dict[str, Any]) -> dict[str, Any] | None:
    """The client's answers (schema ``InputResponses``): an object of objects when sent."""
    if "inputResponses" not in params:
        return None
    responses = params["inputResponses"]
    if type(responses) is not dict or any(
        type(answer) is not dict for answer in responses.values()
    ):
        raise InvalidParams("Invalid params: inputResponses must be an object of response objects")
    return responses


def _input_methods(capabilities: dict[str, Any]) -> frozenset[str]:
    """The input requests a client with these capabilities can answer."""
    if not capabilities:
        return frozenset()
    return frozenset(
        method
        for method, capability in INPUT_CAPABILITIES.items()
        if type(capabilities.get(capability)) is dict
    )


def _unanswerable(capabilities: dict[str, Any], answer: InputRequired) -> dict[str, Json]:
    """What the answer asks that the client did not declare it can answer: each named as
    the customer is told, with the ``ClientCapabilities`` entry it would take."""
    methods_known = _input_methods(capabilities)
    elicitation = capabilities.get("elicitation") or {}
    unanswerable: dict[str, Json] = {}
    for request in answer.requests.values():
        method = request["method"]
        if method not in methods_known:
            unanswerable[method] = {INPUT_CAPABILITIES[method]: {}}
        elif (
            method == ELICITATION
            and request.get("params", {}).get("mode") == "url"
            and "url" not in elicitation
        ):
            # An empty elicitation capability means form mode only (2025-11-25 onwards).
            unanswerable["elicitation in URL mode"] = {"elicitation": {"url": {}}}
    return unanswerable


def _input_required(
    context: RequestContext, binding: StateBinding, answer: InputRequired, who: str
) -> dict[str, Any]:
    """The input-required result, its state sealed for this one call; ``who`` names the
    tool or prompt to the customer should its state be too long."""
    company = context.company
    try:
        sealed = context.request_states.seal(binding, answer.state)
    except ValueError:
        message = f"{who} with more than Frontdesk accepts."
        if binding.method != "tools/call":
            log.error("prompt_state_oversized", tenant=company.tenant_key, prompt=binding.name)
            raise ProviderFailed(message) from None
        log.error("tool_state_oversized", tenant=company.tenant_key, tool=binding.name)
        return _completed(context, ToolResult.text(message, is_error=True).to_mcp())
    return {
        "resultType": INPUT_REQUIRED,
        "inputRequests": answer.to_mcp(),
        "requestState": sealed,
        "_meta": _server_meta(context),
    }


async def resources_read(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await methods.resources_read(context, params)
    except ResourceNotFound as error:
        # This revision retired -32002: an unknown URI is invalid params, naming the URI.
        raise InvalidParams("Resource not found", data=error.data) from None
    resource = context.company.resources.get(required_str(params, "uri"))
    definition = None if resource is None else resource.definition
    # Text or bytes in the company's definition, for anyone: the same for every caller as
    # long as the company is. A provider's answer may differ by customer and by read.
    shared = (
        definition is not None
        and definition.access is Access.PUBLIC
        and (definition.text is not None or definition.blob_base64 is not None)
    )
    result["cacheScope"] = "public" if shared else "private"
    result["ttlMs"] = _ttl_ms(context) if shared else 0
    return _completed(context, result)


async def completion_complete(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    return _completed(context, await methods.completion_complete(context, params))


HANDLERS: dict[str, methods.Handler] = {
    "server/discover": server_discover,
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": resources_read,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
}
