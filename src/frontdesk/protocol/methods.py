"""The MCP methods: each takes the request context and params and returns a result object."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import structlog

from frontdesk.companies.catalog import ServedPrompt
from frontdesk.companies.definition import Access, PromptDefinition
from frontdesk.companies.uri_templates import MAX_MATCHED_URI_LENGTH
from frontdesk.content import (
    ContentError,
    PromptCall,
    ResourceCall,
    ResourceReader,
    prompt_result,
    resource_contents,
)
from frontdesk.protocol import tool_calls
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import (
    InvalidParams,
    MissingClientCapability,
    ProviderFailed,
    ResourceNotFound,
    RpcError,
    SignInRequired,
)
from frontdesk.protocol.jsonrpc import Result
from frontdesk.protocol.params import no_cursor, optional_object, required_str
from frontdesk.protocol.versions import negotiate
from frontdesk.tools.provider import InputRequired
from frontdesk.usage import counters as usage

log = structlog.get_logger(__name__)

Handler = Callable[[RequestContext, dict[str, Any]], Awaitable[Result]]

# Honest capabilities: no list-change notifications or subscriptions, because this
# endpoint never streams to the client.
CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
    "logging": {},
}

LOG_LEVELS = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)
MAX_COMPLETIONS = 100
# Resources and prompts from providers: how long a read or a build may take.
PROVIDER_TIMEOUT_SECONDS = 30.0

T = TypeVar("T")
EMPTY: dict[str, Any] = {}


async def initialize(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    version = negotiate(params.get("protocolVersion"))
    context.negotiated_version = version
    company = context.company
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": CAPABILITIES,
        "serverInfo": company.server_info,
    }
    if company.definition.instructions:
        result["instructions"] = company.definition.instructions
    return result


async def ping(_context: RequestContext, _params: dict[str, Any]) -> dict[str, Any]:
    return EMPTY


async def tools_list(context: RequestContext, params: dict[str, Any]) -> Result:
    no_cursor(params)
    return context.company.tools_listing


async def tools_call(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    tool, arguments = tool_calls.called_tool(context, params)
    # A 2025 client cannot be asked anything in the middle of a call: a tool that always
    # asks is refused before it runs, one that happens to ask is answered for.
    if tool.definition.required_client_capabilities:
        tool_calls.count_refused(context, tool, usage.UNSUPPORTED_CLIENT)
        return tool_calls.cannot_ask(tool.name).to_mcp()
    refusal = tool_calls.refusal_of(context, tool, arguments)
    if refusal is not None:
        return refusal.to_mcp()
    answer = await tool_calls.run_tool(context, tool, arguments)
    if isinstance(answer, InputRequired):
        answer = tool_calls.cannot_ask(tool.name)
    return answer.to_mcp()


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
        _admit_personal(context, definition.access, f"the resource {uri}")
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
            _admit_personal(context, template.definition.access, f"the resource {uri}")
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
    output = await _provide(context, f"resource {uri}", reader(uri, call))
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


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


async def prompts_get(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    prompt, values = called_prompt(context, params)
    answer = await build_prompt(context, prompt, values)
    if isinstance(answer, InputRequired):
        # A 2025 client cannot be asked anything in the middle of a request, and a prompt
        # has no isError result to say so in.
        raise MissingClientCapability(
            f"The prompt {prompt.definition.name} needs to ask the customer a question first,"
            " and this client cannot answer questions; use a client that speaks MCP 2026-07-28"
        )
    return answer


def called_prompt(
    context: RequestContext, params: dict[str, Any]
) -> tuple[ServedPrompt, dict[str, str]]:
    """The prompt a prompts/get names, admitted for this caller, and its argument values."""
    name = required_str(params, "name")
    arguments = optional_object(params, "arguments")
    prompt = context.company.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}")
    definition = prompt.definition
    _admit_personal(context, definition.access, f"the prompt {name}")
    return prompt, _prompt_arguments(definition, arguments)


async def build_prompt(
    context: RequestContext,
    prompt: ServedPrompt,
    values: dict[str, str],
    input_methods: frozenset[str] = frozenset(),
    input_responses: dict[str, Any] | None = None,
    state: str | None = None,
) -> dict[str, Any] | InputRequired:
    """The prompt's messages, or the questions its builder needs answered first."""
    definition = prompt.definition
    name = definition.name
    if definition.provider is not None:
        if prompt.builder is None:
            raise ProviderFailed(f"The prompt {name} is unavailable right now")
        call = PromptCall(
            context.company.tenant_key,
            name,
            context.caller.customer,
            context.request_id,
            input_methods,
            input_responses,
            state,
        )
        output = await _provide(context, f"prompt {name}", prompt.builder(values, call))
        if isinstance(output, InputRequired):
            return output
        try:
            return prompt_result(output, definition.description)
        except ContentError as error:
            log.error(
                "prompt_output_invalid",
                tenant=context.company.tenant_key,
                prompt=name,
                reason=str(error),
            )
            raise ProviderFailed(f"The prompt {name} is unavailable right now") from None
    messages = [
        {
            "role": message.role,
            "content": {
                "type": "text",
                "text": _PLACEHOLDER.sub(lambda match: values.get(match[1], ""), message.text),
            },
        }
        for message in definition.messages
    ]
    result: dict[str, Any] = {"messages": messages}
    if definition.description:
        result["description"] = definition.description
    return result


def _prompt_arguments(prompt: PromptDefinition, arguments: dict[str, Any]) -> dict[str, str]:
    values: dict[str, str] = {}
    for argument in prompt.arguments:
        value = arguments.get(argument.name)
        if value is None:
            if argument.required:
                raise InvalidParams(f"Missing required argument: {argument.name}")
            continue
        if type(value) is not str:
            raise InvalidParams(f"Invalid params: argument {argument.name} must be a string")
        values[argument.name] = value
    return values


def _admit_personal(context: RequestContext, access: Access, what: str) -> None:
    """Personal resources and prompts follow the tools' rules (interface 5.4, 5.5), as errors."""
    if access is not Access.PERSONAL or not context.caller.is_guest:
        return
    challenges = context.sign_in
    if challenges is None:
        raise SignInRequired(
            f"{what} is for signed-in customers only, and {context.company.name} has not set"
            " up customer sign-in"
        )
    context.www_authenticate = challenges.guest
    raise SignInRequired(
        f"Sign in to {context.company.name} to use {what}",
        data={"mcp/www_authenticate": [challenges.guest_in_reply]},
    )


async def _provide(context: RequestContext, what: str, work: Awaitable[T]) -> T:
    """Await a provider with the standard deadline; failures become a plain error."""
    try:
        async with asyncio.timeout(PROVIDER_TIMEOUT_SECONDS):
            return await work
    except TimeoutError:
        log.warning("provider_timeout", tenant=context.company.tenant_key, item=what)
        raise ProviderFailed(f"The {what} did not answer in time") from None
    except RpcError:
        raise
    except Exception:
        log.exception("provider_failed", tenant=context.company.tenant_key, item=what)
        raise ProviderFailed(f"The {what} is unavailable right now") from None


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


async def logging_set_level(_context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    # Accepted for clients that set it, though this endpoint sends no log notifications.
    level = params.get("level")
    # A list or object is not hashable, so it cannot even be looked up in LOG_LEVELS.
    if type(level) is not str or level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid params: level must be one of {sorted(LOG_LEVELS)}")
    return EMPTY


HANDLERS: dict[str, Handler] = {
    "initialize": initialize,
    "ping": ping,
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": resources_read,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
    "logging/setLevel": logging_set_level,
}
