"""Python tools that ask the customer before they act, for the input-required tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontdesk.tools.provider import ELICITATION, SAMPLING, InputRequired, ToolCall

QUESTION = {
    "method": ELICITATION,
    "params": {
        "message": "Cancel order #1042? This cannot be undone.",
        "requestedSchema": {
            "type": "object",
            "properties": {"cancel": {"type": "boolean"}},
            "required": ["cancel"],
        },
    },
}
STATE = "order=1042;seen=processing"


async def confirm_cancel(arguments: Mapping[str, Any], call: ToolCall) -> Any:
    """Asks to confirm; with the answer and its own state back, says what it did and what it
    was given."""
    answer = (call.input_responses or {}).get("confirm")
    if answer is None:
        return InputRequired({"confirm": QUESTION}, STATE)
    return {
        "order": arguments.get("order"),
        "answer": answer,
        "state": call.state,
        "customer": None if call.customer is None else call.customer.subject,
    }


async def ask_by_url(_arguments: Mapping[str, Any], _call: ToolCall) -> InputRequired:
    """Asks in elicitation's URL mode, which a client must declare separately."""
    return InputRequired(
        {
            "pay": {
                "method": ELICITATION,
                "params": {"mode": "url", "message": "Pay here", "url": "https://pay.example"},
            }
        }
    )


async def ask_the_model(_arguments: Mapping[str, Any], _call: ToolCall) -> InputRequired:
    return InputRequired(
        {
            "summary": {
                "method": SAMPLING,
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                    "maxTokens": 10,
                },
            }
        }
    )


async def what_can_be_asked(_arguments: Mapping[str, Any], call: ToolCall) -> dict[str, Any]:
    return {"methods": sorted(call.input_methods)}


async def oversized_state(_arguments: Mapping[str, Any], _call: ToolCall) -> InputRequired:
    # Within the byte limit, but every control character is six once escaped in JSON.
    return InputRequired({"confirm": QUESTION}, "\x01" * 2000)


async def malformed_request(_arguments: Mapping[str, Any], _call: ToolCall) -> InputRequired:
    return InputRequired({"confirm": {"method": "tools/call", "params": {}}})
