"""Python providers that ask the customer before they answer (MCP 2026-07-28), served by
tests/protocol/test_asking.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontdesk.tools.content import PromptCall
from frontdesk.tools.provider import ELICITATION, SAMPLING, InputRequired, ToolCall

TOPIC_QUESTION: dict[str, Any] = {
    "method": ELICITATION,
    "params": {
        "message": "Which order is the letter about?",
        "requestedSchema": {
            "type": "object",
            "properties": {"order": {"type": "string"}},
            "required": ["order"],
        },
    },
}
SUMMARY_REQUEST: dict[str, Any] = {
    "method": SAMPLING,
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise it."}}],
        "maxTokens": 50,
    },
}
ASKED_STATE = "asked-for-the-order"


async def complaint_letter(arguments: Mapping[str, str], call: PromptCall) -> str | InputRequired:
    """Asks which order the letter is about, with a state of its own, then writes it."""
    answer = (call.input_responses or {}).get("order")
    content = answer.get("content") if isinstance(answer, dict) else None
    order = content.get("order") if isinstance(content, dict) else None
    if call.state != ASKED_STATE or not isinstance(order, str):
        return InputRequired({"order": TOPIC_QUESTION}, ASKED_STATE)
    tone = arguments.get("tone", "polite")
    return f"Write a {tone} letter about order {order} ({sorted(call.input_methods)})."


async def summary(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    """Declared to need sampling: asks the client's model, then says it was answered."""
    if (call.input_responses or {}).get("summary") is None:
        return InputRequired({"summary": SUMMARY_REQUEST})
    return "summarised"
