"""Asking the client in the middle of a request (MCP 2026-07-28: the input-required
result): what a client declared it can answer, the answers and state it sends back, and the
input-required result, its state sealed (``request_state``) so that any instance can take
the call up again. The methods in ``core`` and ``prompts`` use it where the revision can
ask (``Revision.client_capabilities``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from frontdesk.companies.catalog import ServedTool
from frontdesk.protocol.context import RequestContext
from frontdesk.protocol.envelope import CLIENT_CAPABILITIES_KEY
from frontdesk.protocol.errors import InvalidParams, MissingClientCapability, ProviderFailed
from frontdesk.protocol.request_state import StateBinding
from frontdesk.tools.provider import ELICITATION, ROOTS, SAMPLING, InputRequired, ToolResult

log = structlog.get_logger(__name__)

# The client capability each input request needs (schema ``ClientCapabilities``).
INPUT_CAPABILITIES = {ELICITATION: "elicitation", SAMPLING: "sampling", ROOTS: "roots"}
NO_INPUT: frozenset[str] = frozenset()

Json = dict[str, Any]


class InputRequiredResult(dict[str, Any]):
    """The result of a request that needs the client's answers first: its own type, so that
    a revision marks it as such (``resultType``) and not as complete."""


def tool_binding(
    context: RequestContext, tool: ServedTool, arguments: dict[str, Any]
) -> StateBinding:
    return StateBinding.of(
        context.company.tenant_key, "tools/call", tool.name, arguments, context.caller
    )


def require_capabilities(tool: str, required: Sequence[str], capabilities: dict[str, Any]) -> None:
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


def sealed_state(params: dict[str, Any]) -> str | None:
    sealed = params.get("requestState")
    if sealed is not None and type(sealed) is not str:
        raise InvalidParams("Invalid params: requestState must be a string")
    return sealed


def input_responses(params: dict[str, Any]) -> dict[str, Any] | None:
    """The client's answers (schema ``InputResponses``): an object of objects when sent."""
    if "inputResponses" not in params:
        return None
    responses = params["inputResponses"]
    if type(responses) is not dict or any(
        type(answer) is not dict for answer in responses.values()
    ):
        raise InvalidParams("Invalid params: inputResponses must be an object of response objects")
    return responses


def input_methods(capabilities: dict[str, Any]) -> frozenset[str]:
    """The input requests a client with these capabilities can answer."""
    if not capabilities:
        return NO_INPUT
    return frozenset(
        method
        for method, capability in INPUT_CAPABILITIES.items()
        if type(capabilities.get(capability)) is dict
    )


def unanswerable(capabilities: dict[str, Any], answer: InputRequired) -> dict[str, Json]:
    """What the answer asks that the client did not declare it can answer: each named as
    the customer is told, with the ``ClientCapabilities`` entry it would take."""
    methods_known = input_methods(capabilities)
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


def input_required(
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
        return ToolResult.text(message, is_error=True).to_mcp()
    return InputRequiredResult(inputRequests=answer.to_mcp(), requestState=sealed)
