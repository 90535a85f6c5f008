"""The conformance company's tools and prompt that ask the client for input (MCP 2026-07-28),
served by the ``python`` provider.

Names, keys and questions are the ones the conformance suite's ``input-required-result-*``
scenarios expect. Each tool asks again when the answer it needs is missing, and completes once
it has it; Frontdesk seals and checks the state between the rounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from frontdesk.tools.content import PromptCall
from frontdesk.tools.provider import ELICITATION, ROOTS, SAMPLING, InputRequired, ToolCall

Json = dict[str, Any]


def _elicitation(message: str, field: str, field_type: str = "string") -> Json:
    return {
        "method": ELICITATION,
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": field_type}},
                "required": [field],
            },
        },
    }


def _sampling(prompt: str, max_tokens: int) -> Json:
    return {
        "method": SAMPLING,
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        },
    }


ROOTS_REQUEST: Json = {"method": ROOTS, "params": {}}


def _accepted(call: ToolCall, key: str, field: str) -> Any:
    """The value of ``field`` in an accepted elicitation answer under ``key``, or None."""
    answer = (call.input_responses or {}).get(key)
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return None
    content = answer.get("content")
    return content.get(field) if isinstance(content, dict) else None


def _answer(call: ToolCall, key: str) -> Json | None:
    answer = (call.input_responses or {}).get(key)
    return answer if isinstance(answer, dict) else None


async def elicitation(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    name = _accepted(call, "user_name", "name")
    if not isinstance(name, str):
        return InputRequired({"user_name": _elicitation("What is your name?", "name")})
    return f"Hello, {name}!"


async def sampling(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    answer = _answer(call, "capital_question")
    if answer is None:
        return InputRequired({"capital_question": _sampling("What is the capital of France?", 100)})
    content = answer.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return f"The model answered: {text}" if isinstance(text, str) else "The model answered."


async def list_roots(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    answer = _answer(call, "client_roots")
    if answer is None or not isinstance(answer.get("roots"), list):
        return InputRequired({"client_roots": ROOTS_REQUEST})
    uris = [root.get("uri") for root in answer["roots"] if isinstance(root, dict)]
    return f"The client's roots: {', '.join(str(uri) for uri in uris)}"


CONFIRM_STATE = "awaiting-confirmation"


async def request_state(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    if call.state != CONFIRM_STATE or _accepted(call, "confirm", "ok") is None:
        return InputRequired(
            {"confirm": _elicitation("Please confirm", "ok", "boolean")}, CONFIRM_STATE
        )
    return "state-ok: the state came back as it was sent."


async def multiple_inputs(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    requests = {
        "user_name": _elicitation("What is your name?", "name"),
        "greeting": _sampling("Generate a greeting", 50),
        "client_roots": ROOTS_REQUEST,
    }
    if call.state != "asked-all" or any(_answer(call, key) is None for key in requests):
        return InputRequired(requests, "asked-all")
    return f"Thanks, {_accepted(call, 'user_name', 'name')}: all three answers arrived."


async def multi_round(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    name = _accepted(call, "step1", "name")
    if call.state == "round-1" and isinstance(name, str):
        return InputRequired(
            {"step2": _elicitation("Step 2: What is your favorite color?", "color")},
            f"round-2:{name}",
        )
    color = _accepted(call, "step2", "color")
    if call.state is not None and call.state.startswith("round-2:") and isinstance(color, str):
        return f"{call.state.removeprefix('round-2:')} likes {color}."
    return InputRequired({"step1": _elicitation("Step 1: What is your name?", "name")}, "round-1")


async def tampered_state(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    if call.state != CONFIRM_STATE or _accepted(call, "confirm", "ok") is None:
        return InputRequired(
            {"confirm": _elicitation("Please confirm", "ok", "boolean")}, CONFIRM_STATE
        )
    return "Confirmed with an untouched state."


async def capabilities(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    """Asks only what the client declared it can answer (``call.input_methods``)."""
    wanted = {
        "user_name": _elicitation("What is your name?", "name"),
        "greeting": _sampling("Generate a greeting", 50),
        "client_roots": ROOTS_REQUEST,
    }
    askable = {
        key: request for key, request in wanted.items() if request["method"] in call.input_methods
    }
    if not askable or all(_answer(call, key) is not None for key in askable):
        return "Nothing left to ask this client."
    return InputRequired(askable)


async def missing_capability(_arguments: Mapping[str, Any], call: ToolCall) -> str | InputRequired:
    """Declared to need sampling: a client that does not declare it never reaches here."""
    answer = _answer(call, "summary")
    if answer is None:
        return InputRequired({"summary": _sampling("Summarise the conversation so far.", 100)})
    return "The model summarised the conversation."


async def prompt(_arguments: Mapping[str, str], call: PromptCall) -> str | InputRequired:
    """A prompt that asks what context to use before it is built (prompts/get)."""
    answer = (call.input_responses or {}).get("user_context")
    content = answer.get("content") if isinstance(answer, dict) else None
    context = content.get("context") if isinstance(content, dict) else None
    if not isinstance(context, str):
        return InputRequired(
            {"user_context": _elicitation("What context should the prompt use?", "context")}
        )
    return f"Answer with this context in mind: {context}"
