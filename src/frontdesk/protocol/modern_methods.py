"""The methods of MCP 2026-07-28, served by the same handlers as 2025's (``methods``) with
the fields this revision's results carry: ``resultType``, the server's info in ``_meta``,
``ttlMs`` and ``cacheScope`` on what may be cached; ``server/discover``; and the
input-required result of a tool or prompt that asks the customer, its state sealed
(``request_state``) so that any instance can take the call up again.

The methods are 2025's less ``initialize``, ``ping``, ``logging/setLevel`` and the
subscription pair: at this revision those are answered as unknown methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import structlog

from frontdesk.companies.catalog import ServedTool
from frontdesk.companies.definition import Access
from frontdesk.protocol import methods, tool_calls
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import (
    InvalidParams,
    MissingClientCapability,
    ProviderFailed,
    ResourceNotFound,
)
from frontdesk.protocol.jsonrpc import Result
from frontdesk.protocol.modern import CLIENT_CAPABILITIES_KEY
from frontdesk.protocol.params import no_cursor, required_str
from frontdesk.protocol.request_state import StateBinding
from frontdesk.protocol.versions import ALL_VERSIONS
from frontdesk.tools.provider import ELICITATION, ROOTS, SAMPLING, InputRequired, ToolResult
from frontdesk.usage import counters as usage

log = structlog.get_logger(__name__)

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

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
_NO_INPUT: frozenset[str] = frozenset()

Json = dict[str, Any]


def _ttl_ms(context: RequestContext) -> int:
    """How long this instance serves the company's listings as they are, in milliseconds."""
    modern = context.modern
    return 0 if modern is None else int(modern.fresh_for(context.company.tenant_key) * 1000)


def _server_meta(context: RequestContext, meta: Any = None) -> dict[str, Any] | orjson.Fragment:
    """The result's ``_meta``: its own keys, and who answers (servers SHOULD say so on
    every result)."""
    if meta is None:
        return context.company.server_info_meta
    return {**meta, SERVER_INFO_KEY: context.company.server_info}


def _completed(context: RequestContext, result: dict[str, Any]) -> dict[str, Any]:
    result["resultType"] = COMPLETE
    result["_meta"] = _server_meta(context, result.get("_meta"))
    return result


def _listing(context: RequestContext, listing_json: bytes) -> orjson.Fragment:
    """A listing rendered when the company was loaded, with this revision's fields added.

    The listing is the same for every caller of the company, guest or customer (interface 5.5),
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
    tool, arguments = tool_calls.called_tool(context, params)
    capabilities = params["_meta"][CLIENT_CAPABILITIES_KEY]
    required = tool.definition.required_client_capabilities
    if required:
        # Before anything else: signing in or fixing the arguments would not make it callable.
        try:
            _require_capabilities(tool.name, required, capabilities)
        except MissingClientCapability:
            tool_calls.count_refused(context, tool, usage.UNSUPPORTED_CLIENT)
            raise
    # Most calls carry neither: each is read only when sent.
    input_responses = _input_responses(params) if "inputResponses" in params else None
    sealed = _sealed_state(params) if "requestState" in params else None
    refusal = tool_calls.refusal_of(context, tool, arguments)
    if refusal is not None:
        return _completed(context, refusal.to_mcp())
    # The binding is built only for a call that carries a state or asks: hashing the
    # arguments would cost every other call for nothing.
    state = (
        None
        if sealed is None
        else context.request_states.open(sealed, _tool_binding(context, tool, arguments))
    )
    input_methods = _input_methods(capabilities) if capabilities else _NO_INPUT
    answer = await tool_calls.run_tool(
        context, tool, arguments, input_methods, input_responses, state
    )
    if not isinstance(answer, InputRequired):
        return _completed(context, answer.to_mcp())
    unanswerable = _unanswerable(capabilities, answer)
    if unanswerable:
        # The revision: a server MUST NOT ask what the client did not declare it can
        # answer. The tool's own choice to ask: its call failed, told in its result.
        log.warning("tool_input_unanswerable", tenant=context.company.tenant_key, tool=tool.name)
        return _completed(
            context,
            ToolResult.text(
                f"{tool.name} needs to ask the customer something this client cannot"
                f" answer ({', '.join(sorted(unanswerable))}).",
                is_error=True,
            ).to_mcp(),
        )
    binding = _tool_binding(context, tool, arguments)
    return _input_required(context, binding, answer, f"{tool.name} answered")


def _tool_binding(
    context: RequestContext, tool: ServedTool, arguments: dict[str, Any]
) -> StateBinding:
    return StateBinding.of(
        context.company.tenant_key, "tools/call", tool.name, arguments, context.caller
    )


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
        return _NO_INPUT
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
