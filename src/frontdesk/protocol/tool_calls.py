"""A ``tools/call`` as both revisions make it: the tool named, the call refused when it must
not reach the provider (a guest at a personal tool, arguments its schema refuses), and the
provider's answer, within the tool's time limit, every failure turned into an isError
result (MCP: tool errors are results the model can see, not protocol errors).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog

from frontdesk import metrics
from frontdesk.companies.catalog import ServedTool
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.errors import InvalidParams
from frontdesk.protocol.params import optional_object, required_str
from frontdesk.schemas import SchemaCheck
from frontdesk.tools.provider import ToolAnswer, ToolCall, ToolError, ToolResult

log = structlog.get_logger(__name__)


def cannot_ask(tool: str) -> ToolResult:
    return ToolResult.text(
        f"{tool} needs to ask the customer a question before it can act, and this"
        " client cannot answer questions; use a client that speaks MCP 2026-07-28.",
        is_error=True,
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
    try:
        async with asyncio.timeout(tool.definition.timeout):
            result = await provider.call(call)
    except ToolError as error:
        outcome = error.outcome
        result = ToolResult.text(error.message, is_error=True)
    except TimeoutError:
        outcome = "timeout"
        log.warning("tool_timeout", tenant=company.tenant_key, tool=tool.name)
        result = ToolResult.text(
            f"{tool.name} did not answer within {tool.definition.timeout:g} seconds.",
            is_error=True,
        )
    except Exception:
        outcome = "error"
        # The caller learns only that it failed; the detail goes to our log.
        log.exception("tool_failed", tenant=company.tenant_key, tool=tool.name)
        result = ToolResult.text(f"{tool.name} failed; please try again later.", is_error=True)
    else:
        if tool.output is not None and isinstance(result, ToolResult) and not result.is_error:
            result = _as_declared(company.tenant_key, tool.name, tool.output, result)
    # The company and the tool are both known here: the tool is one the company serves.
    metrics.backend_call(company.tenant_key, tool.name, outcome, time.perf_counter() - started)
    return result


def refusal_of(
    context: RequestContext, tool: ServedTool, arguments: dict[str, Any]
) -> ToolResult | None:
    """The isError result for a call that must not reach the provider, or None."""
    company = context.company
    if tool.is_personal and context.caller.is_guest:
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
    problem = tool.arguments.problem(arguments)
    if problem is not None:
        return ToolResult.text(f"Invalid arguments for {tool.name}: {problem}", is_error=True)
    return None


def _as_declared(tenant_key: str, tool: str, output: SchemaCheck, result: ToolResult) -> ToolResult:
    """The result, unless its structured content breaks the tool's output schema."""
    structured = result.structured
    if structured is None or output.problem(structured) is not None:
        log.error("tool_output_invalid", tenant=tenant_key, tool=tool)
        return ToolResult.text(f"{tool} answered in a shape it did not declare.", is_error=True)
    return result
