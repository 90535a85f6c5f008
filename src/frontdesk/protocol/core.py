"""The MCP methods every revision serves: tools, resources, prompts and completion, each
taking the request context and params and returning a result object, the same whatever the
revision (``revision``: a revision adds its own fields to the result, and its own methods:
``initialize`` and ``ping``, ``server/discover``).

Where revisions differ in what they can do, the revision is asked, not named: whether the
client can be asked something in the middle of a request (``Revision.client_capabilities``,
the asking itself in ``asking``).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

import structlog

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import Access
from frontdesk.companies.uri_templates import MAX_MATCHED_URI_LENGTH
from frontdesk.protocol import asking, tool_calls
from frontdesk.protocol.admission import admit_personal, provide
from frontdesk.protocol.context import Handler, RequestContext
from frontdesk.protocol.errors import (
    InvalidParams,
    MissingClientCapability,
    ProviderFailed,
    ResourceNotFound,
)
from frontdesk.protocol.jsonrpc import Result
from frontdesk.protocol.params import no_cursor, optional_object, required_str
from frontdesk.protocol.prompts import prompts_get
from frontdesk.tools.content import ContentError, ResourceCall, ResourceReader, resource_contents
from frontdesk.tools.provider import InputRequired, ToolResult
from frontdesk.usage import counters as usage

log = structlog.get_logger(__name__)

# Whether a method's result is the same for every caller of the company, as long as this
# instance keeps the company as it is (a revision with caching hints says so).
Sharing = Callable[[RequestContext, dict[str, Any]], bool]

MAX_COMPLETIONS = 100

# The four listings, each rendered to JSON once when its company is loaded.
LISTING_JSON: dict[str, Callable[[ServedCompany], bytes]] = {
    "tools/list": attrgetter("tools_json"),
    "resources/list": attrgetter("resources_json"),
    "resources/templates/list": attrgetter("resource_templates_json"),
    "prompts/list": attrgetter("prompts_json"),
}


async def tools_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return context.company.tools_listing


async def tools_call(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A call; where the revision can ask the client, a call made again with the client's
    answers and the requestState it was given, and an input-required result for a tool
    that needs input first."""
    tool, arguments = tool_calls.called_tool(context, params)
    capabilities = context.revision.client_capabilities(params)
    if tool.definition.required_client_capabilities:
        # Before anything else: signing in or fixing the arguments would not make it callable.
        if capabilities is None:
            # A client that can never be asked: refused before it runs, in its result.
            tool_calls.count_refused(context, tool, usage.UNSUPPORTED_CLIENT)
            return tool_calls.cannot_ask(tool.name).to_mcp()
        try:
            asking.require_capabilities(
                tool.name, tool.definition.required_client_capabilities, capabilities
            )
        except MissingClientCapability:
            tool_calls.count_refused(context, tool, usage.UNSUPPORTED_CLIENT)
            raise
    input_responses = sealed = None
    # Most calls carry neither, and a client that cannot be asked sends none: each is
    # read only when sent.
    if capabilities is not None:
        if "inputResponses" in params:
            input_responses = asking.input_responses(params)
        if "requestState" in params:
            sealed = asking.sealed_state(params)
    refusal = tool_calls.refusal_of(context, tool, arguments)
    if refusal is not None:
        return refusal.to_mcp()
    # The binding is built only for a call that carries a state or asks: hashing the
    # arguments would cost every other call for nothing.
    state = (
        None
        if sealed is None
        else context.request_states.open(sealed, asking.tool_binding(context, tool, arguments))
    )
    input_methods = asking.input_methods(capabilities) if capabilities else asking.NO_INPUT
    answer = await tool_calls.run_tool(
        context, tool, arguments, input_methods, input_responses, state
    )
    if not isinstance(answer, InputRequired):
        return answer.to_mcp()
    if capabilities is None:
        # A tool that happens to ask a client that cannot be asked is answered for.
        return tool_calls.cannot_ask(tool.name).to_mcp()
    unanswerable = asking.unanswerable(capabilities, answer)
    if unanswerable:
        # A server MUST NOT ask what the client did not declare it can answer (MCP
        # 2026-07-28). The tool's own choice to ask: its call failed, told in its result.
        log.warning("tool_input_unanswerable", tenant=context.company.tenant_key, tool=tool.name)
        return ToolResult.text(
            f"{tool.name} needs to ask the customer something this client cannot"
            f" answer ({', '.join(sorted(unanswerable))}).",
            is_error=True,
        ).to_mcp()
    binding = asking.tool_binding(context, tool, arguments)
    return asking.input_required(context, binding, answer, f"{tool.name} answered")


async def resources_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return context.company.resources_listing


async def resource_templates_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return context.company.resource_templates_listing


async def resources_read(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    uri = required_str(params, "uri")
    if len(uri) > MAX_MATCHED_URI_LENGTH:
        # Refused before any template sees it: matching is linear, but need not be long.
        raise InvalidParams(f"Invalid params: uri is over {MAX_MATCHED_URI_LENGTH} characters")
    company = context.company
    resource = company.resources.get(uri)
    if resource is not None:
        definition = resource.definition
        admit_personal(context, definition.access, f"the resource {uri}")
        if definition.text is not None:
            return {
                "contents": [
                    {"uri": uri, "mimeType": definition.mime_type, "text": definition.text}
                ]
            }
        if definition.blob_base64 is not None:
            return {
                "contents": [
                    {"uri": uri, "mimeType": definition.mime_type, "blob": definition.blob_base64}
                ]
            }
        return await _read(context, uri, {}, definition.mime_type, resource.reader)
    for template in company.resource_templates.values():
        variables = template.match(uri)
        if variables is not None and template.reader is not None:
            admit_personal(context, template.definition.access, f"the resource {uri}")
            return await _read(
                context, uri, variables, template.definition.mime_type, template.reader
            )
    raise ResourceNotFound("Resource not found", data={"uri": uri})


async def _read(
    context: RequestContext,
    uri: str,
    variables: dict[str, str],
    mime_type: str | None,
    reader: ResourceReader | None,
) -> dict[str, Any]:
    if reader is None:
        raise ProviderFailed(f"The resource {uri} is unavailable right now")
    call = ResourceCall(
        context.company.tenant_key, uri, variables, context.caller.customer, context.request_id
    )
    output = await provide(context, f"resource {uri}", reader(uri, call))
    try:
        return {"contents": resource_contents(uri, mime_type, output)}
    except ContentError as error:
        log.error(
            "resource_output_invalid", tenant=context.company.tenant_key, uri=uri, reason=str(error)
        )
        raise ProviderFailed(f"The resource {uri} is unavailable right now") from None


async def prompts_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return context.company.prompts_listing


async def completion_complete(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    reference = optional_object(params, "ref")
    argument = optional_object(params, "argument")
    argument_name = required_str(argument, "name")
    typed = required_str(argument, "value")
    company = context.company
    choices: list[str]
    match reference.get("type"):
        case "ref/prompt":
            prompt = company.prompts.get(required_str(reference, "name"))
            if prompt is None:
                raise InvalidParams("Unknown prompt")
            choices = next(
                (
                    item.completions
                    for item in prompt.definition.arguments
                    if item.name == argument_name
                ),
                [],
            )
        case "ref/resource":
            template = company.resource_templates.get(required_str(reference, "uri"))
            if template is None:
                raise InvalidParams("Unknown resource template")
            choices = template.definition.completions.get(argument_name, [])
        case _:
            raise InvalidParams('Invalid params: ref.type must be "ref/prompt" or "ref/resource"')
    prefix = typed.casefold()
    matches = [choice for choice in choices if choice.casefold().startswith(prefix)]
    return {
        "completion": {
            "values": matches[:MAX_COMPLETIONS],
            "total": len(matches),
            "hasMore": len(matches) > MAX_COMPLETIONS,
        }
    }


def always_shared(_context: RequestContext, _params: dict[str, Any]) -> bool:
    """A listing is the same for every caller of the company, guest or customer (interface
    5.5)."""
    return True


def read_is_shared(context: RequestContext, params: dict[str, Any]) -> bool:
    """Text or bytes in the company's definition, for anyone, are the same for every
    caller; a provider's answer may differ by customer and by read."""
    resource = context.company.resources.get(params["uri"])
    if resource is None:
        return False
    definition = resource.definition
    return definition.access is Access.PUBLIC and (
        definition.text is not None or definition.blob_base64 is not None
    )


# The methods every revision serves, and which of their results a revision may mark as
# shared (those not named here carry no caching hint).
METHODS: dict[str, Handler] = {
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": resources_read,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
}
SHARING: dict[str, Sharing] = {
    **dict.fromkeys(LISTING_JSON, always_shared),
    "resources/read": read_is_shared,
}
