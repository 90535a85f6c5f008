"""``prompts/get``: the prompt named, admitted for the caller, its arguments checked, and
its messages, written in the definition or built by its provider; where the revision can
ask the client, the questions its builder needs answered first (``asking``)."""

from __future__ import annotations

import re
from typing import Any

import structlog

from frontdesk.companies.catalog import ServedPrompt
from frontdesk.companies.definition import PromptDefinition
from frontdesk.protocol import asking
from frontdesk.protocol.admission import admit_personal, provide
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import InvalidParams, MissingClientCapability, ProviderFailed
from frontdesk.protocol.params import optional_object, required_str
from frontdesk.protocol.request_state import StateBinding
from frontdesk.tools.content import ContentError, PromptCall, prompt_result
from frontdesk.tools.provider import InputRequired

log = structlog.get_logger(__name__)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


async def prompts_get(context: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A prompt; where the revision can ask the client, a request made again with the
    client's answers and the requestState it was given, and an input-required result for
    a prompt whose builder needs input first."""
    prompt, values = called_prompt(context, params)
    name = prompt.definition.name
    capabilities = context.revision.client_capabilities(params)
    if capabilities is None:
        answer = await build_prompt(context, prompt, values)
        if isinstance(answer, InputRequired):
            # The client cannot be asked anything in the middle of a request, and a prompt
            # has no isError result to say so in.
            raise MissingClientCapability(
                f"The prompt {name} needs to ask the customer a question first, and this"
                " client cannot answer questions; use a client that speaks MCP 2026-07-28"
            )
        return answer
    input_responses = asking.input_responses(params)
    sealed = asking.sealed_state(params)
    binding = StateBinding.of(
        context.company.tenant_key, "prompts/get", name, values, context.caller
    )
    state = None if sealed is None else context.request_states.open(sealed, binding)
    answer = await build_prompt(
        context, prompt, values, asking.input_methods(capabilities), input_responses, state
    )
    if not isinstance(answer, InputRequired):
        return answer
    unanswerable = asking.unanswerable(capabilities, answer)
    if unanswerable:
        # A prompt has no isError result: the error for a request that needs what the
        # client did not declare.
        required: dict[str, Any] = {}
        for entry in unanswerable.values():
            required.update(entry)
        raise MissingClientCapability(
            f"The prompt {name} needs to ask the customer something this client cannot"
            f" answer ({', '.join(sorted(unanswerable))})",
            data={"requiredCapabilities": required},
        )
    return asking.input_required(context, binding, answer, f"The prompt {name} answered")


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
    admit_personal(context, definition.access, f"the prompt {name}")
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
        output = await provide(context, f"prompt {name}", prompt.builder(values, call))
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
