"""A ``tools/call`` as both revisions make it: the tool named, the call refused when it must
not reach the provider (a guest at a personal tool, arguments its schema refuses), and the
provider's answer, within the tool's time limit, every failure turned into an isError
result (MCP: tool errors are results the model can see, not protocol errors). Each call is
counted for the company's usage (frontdesk.usage) by how it ended.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog

from frontdesk.companies.catalog import ServedTool
from frontdesk.observability import metrics
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import InvalidParams
from frontdesk.protocol.params import optional_object, required_str
from frontdesk.protocol.scope_step_up import step_up
from frontdesk.tools.provider import InputRequired, ToolAnswer, ToolCall, ToolError, ToolResult
from frontdesk.tools.schemas import SchemaCheck
from frontdesk.usage import counters as usage

log = structlog.get_logger(__name__)

# A ToolError's outcome (as metrics count it) as usage counts it; any other is the tool's
# own error for the customer.
_USAGE_OF_OUTCOME = {
    "timeout": usage.TIMEOUT,
    "unavailable": usage.UNAVAILABLE,
    "refused": usage.UNAVAILABLE,
}


def cannot_ask(tool: str) -> ToolResult:
    return ToolResult.text(
        f"{tool} needs to ask the customer a question before it can act, and this"
        " client cannot answer questions; use a client that speaks MCP 2026-07-28.",
        is_error=True,
    )


def count_refused(context: RequestContext, tool: ServedTool, outcome: str) -> None:
    """Count a call refused before its provider (it has no latency)."""
    customer = context.caller.customer
    context.usage.record(
        context.company.tenant_key,
        tool.name,
        outcome,
        None if customer is None else customer.subject,
    )


def called_tool(
    context: RequestContext, params: dict[str, Any]
) -> tuple[ServedTool, dict[str, Any]]:
    """The tool a tools/call names, and its arguments; InvalidParams for an unknown tool."""
    name = required_str(params, "name")
    arguments = optional_object(params, "arguments")
    tool = context.company.tools.get(name)
    if tool is None:
        raise InvalidParams(f"Unknown tool: {name}")
    return tool, arguments


async def run_tool(
    context: RequestContext,
    tool: ServedTool,
    arguments: dict[str, Any],
    input_methods: frozenset[str] = frozenset(),
    input_responses: dict[str, Any] | None = None,
    state: str | None = None,
) -> ToolAnswer:
    """The provider's answer to an admitted call; every failure becomes an isError result."""
    company = context.company
    provider = tool.provider
    if provider is None:
        metrics.backend_call(company.tenant_key, tool.name, "unavailable")
        count_refused(context, tool, usage.UNAVAILABLE)
        return ToolResult.text(f"{tool.name} is unavailable right now.", is_error=True)
    call = ToolCall(
        company.tenant_key,
        tool.name,
        arguments,
        context.caller.customer,
        context.request_id,
        input_methods,
        input_responses,
        state,
        context.caller.client_id,
    )
    started = time.perf_counter()
    outcome = "ok"
    used = usage.OK
    try:
        if getattr(provider, "never_waits", False):
            # No timer: a timeout fires only where a call waits, and this one never does.
            result = await provider.call(call)
        else:
            async with asyncio.timeout(tool.definition.timeout):
                result = await provider.call(call)
    except ToolError as error:
        outcome = error.outcome
        used = _USAGE_OF_OUTCOME.get(outcome, usage.TOOL_ERROR)
        result = ToolResult.text(error.message, is_error=True)
    except TimeoutError:
        outcome = "timeout"
        used = usage.TIMEOUT
        log.warning("tool_timeout", tenant=company.tenant_key, tool=tool.name)
        result = ToolResult.text(
            f"{tool.name} did not answer within {tool.definition.timeout:g} seconds.",
            is_error=True,
        )
    except Exception:
        outcome = "error"
        used = usage.BACKEND_ERROR
        # The caller learns only that it failed; the detail goes to our log.
        log.exception("tool_failed", tenant=company.tenant_key, tool=tool.name)
        result = ToolResult.text(f"{tool.name} failed; please try again later.", is_error=True)
    else:
        if isinstance(result, InputRequired):
            used = _usage_of_asking(result, input_methods)
        elif result.is_error:
            used = usage.TOOL_ERROR
        elif tool.output is not None:
            result = _as_declared(company.tenant_key, tool.name, tool.output, result)
            if result.is_error:
                used = usage.BACKEND_ERROR
    elapsed = time.perf_counter() - started
    # The company and the tool are both known here: the tool is one the company serves.
    metrics.backend_call(company.tenant_key, tool.name, outcome, elapsed)
    customer = context.caller.customer
    subject = None if customer is None else customer.subject
    context.usage.record(company.tenant_key, tool.name, used, subject, elapsed)
    return result


def _usage_of_asking(answer: InputRequired, input_methods: frozenset[str]) -> str:
    """A tool that asks has answered as it should, unless the client cannot answer it (a
    2025 client never can): then the call fails for the client's sake."""
    for request in answer.requests.values():
        if request["method"] not in input_methods:
            return usage.UNSUPPORTED_CLIENT
    return usage.OK


def refusal_of(
    context: RequestContext, tool: ServedTool, arguments: dict[str, Any]
) -> ToolResult | None:
    """The isError result for a call that must not reach the provider, or None."""
    company = context.company
    if tool.is_personal and context.caller.is_guest:
        count_refused(context, tool, usage.UNAUTHORIZED)
        challenges = context.sign_in
        if challenges is None:
            return ToolResult.text(
                f"{tool.name} answers signed-in customers only, and {company.name} has not"
                " set up customer sign-in, so it cannot be used here.",
                is_error=True,
            )
        # interface 5.5: the reply says so, and the whole response becomes a 401 whose
        # challenge sends the client to sign the customer in.
        context.www_authenticate = challenges.guest
        return ToolResult(
            content=[{"type": "text", "text": f"Sign in to {company.name} to use {tool.name}."}],
            is_error=True,
            meta={"mcp/www_authenticate": [challenges.guest_in_reply]},
        )
    if tool.name in context.caller.asked_again and context.sign_in is not None:
        # Changed since the customer allowed this client, in a way that may do more
        # (oauth.tool_consent): the step-up challenge until they allow it again.
        count_refused(context, tool, usage.UNAUTHORIZED)
        context.www_authenticate = context.sign_in.tool_changed
        return ToolResult(
            content=[
                {
                    "type": "text",
                    "text": f"{tool.name} changed since you allowed this assistant at"
                    f" {company.name}: allow it again to use it.",
                }
            ],
            is_error=True,
            meta={"mcp/www_authenticate": [context.sign_in.tool_changed]},
        )
    # A tool with a scope of its own answers only a grant holding it (companies.tool_scopes).
    needed, customer = tool.definition.scope, context.caller.customer
    if needed is not None and customer is not None and needed not in customer.scopes:
        count_refused(context, tool, usage.UNAUTHORIZED)
        return step_up(context, tool, customer, needed)
    problem = tool.arguments.problem(arguments)
    if problem is not None:
        count_refused(context, tool, usage.INVALID_ARGUMENTS)
        return ToolResult.text(f"Invalid arguments for {tool.name}: {problem}", is_error=True)
    return None


def _as_declared(tenant_key: str, tool: str, output: SchemaCheck, result: ToolResult) -> ToolResult:
    """The result, unless its structured content breaks the tool's output schema."""
    structured = result.structured
    if structured is None or output.problem(structured) is not None:
        log.error("tool_output_invalid", tenant=tenant_key, tool=tool)
        return ToolResult.text(f"{tool} answered in a shape it did not declare.", is_error=True)
    return result
