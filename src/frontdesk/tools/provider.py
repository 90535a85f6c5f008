"""The one async protocol every tool provider speaks, and what a call carries in and out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from frontdesk.domain import Customer

ContentBlock = dict[str, Any]

# What a tool may ask the customer's client in an input-required answer (MCP 2026-07-28,
# schema ``InputRequest``): a question for the customer, a completion from the client's
# model, the client's roots.
ELICITATION = "elicitation/create"
SAMPLING = "sampling/createMessage"
ROOTS = "roots/list"
INPUT_METHODS = frozenset({ELICITATION, SAMPLING, ROOTS})
# The params each input request must carry, or the client rejects the whole result.
_REQUIRED_PARAMS = {ELICITATION: ("message",), SAMPLING: ("messages", "maxTokens"), ROOTS: ()}
MAX_INPUT_REQUESTS = 10
MAX_INPUT_KEY_LENGTH = 100
# A tool's own state travels sealed in the client's requestState (protocol.request_state),
# which must stay within what the signer accepts back.
MAX_STATE_BYTES = 2048


class ToolCall(NamedTuple):
    """One call of one tool, as a provider receives it.

    Immutable, as a tuple: one is built per call, and a tuple is cheaper to build than a
    frozen dataclass (docs/decisions/hot-path-records.md).
    """

    tenant_key: str
    tool: str
    arguments: Mapping[str, Any]
    customer: Customer | None
    request_id: str
    # The input request methods the caller's client can answer (``INPUT_METHODS``); none
    # for a 2025 client, which cannot be asked anything.
    input_methods: frozenset[str] = frozenset()
    # On a call made again after an ``InputRequired`` answer: the client's answers, keyed
    # as the questions were (the customer's words, not proof of anything), and the state
    # the tool answered with, as it left it.
    input_responses: Mapping[str, Any] | None = None
    state: str | None = None
    # The assistant's OAuth client on a signed-in call (its identity token's client_id).
    client_id: str | None = None


@dataclass(slots=True)
class ToolResult:
    """What a tool answered, in MCP's terms (content blocks, structured content, isError).

    Not frozen: every call builds one, a frozen dataclass is dearer to build
    (docs/decisions/hot-path-records.md), and nothing keeps a result after it is
    answered.
    """

    content: list[ContentBlock] = field(default_factory=list)
    structured: dict[str, Any] | None = None
    is_error: bool = False
    meta: dict[str, Any] | None = None

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolResult:
        return cls(content=[{"type": "text", "text": text}], is_error=is_error)

    def to_mcp(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": self.content, "isError": self.is_error}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        if self.meta is not None:
            result["_meta"] = self.meta
        return result


@dataclass(slots=True)
class InputRequired:
    """A tool's answer that it needs input from the customer's client before it can act.

    ``requests`` are MCP 2026-07-28 input requests keyed by names the tool chooses, e.g.
    ``{"confirm": {"method": "elicitation/create", "params": {"message": ...,
    "requestedSchema": ...}}}``; ``state`` is the tool's own, returned to it as it was on
    the call made again with the answers. Checked when built: ValueError says what is wrong.
    """

    requests: dict[str, dict[str, Any]]
    state: str | None = None

    def __post_init__(self) -> None:
        requests = self.requests
        if not isinstance(requests, dict) or not 1 <= len(requests) <= MAX_INPUT_REQUESTS:
            raise ValueError(f"inputRequests must be an object of 1 to {MAX_INPUT_REQUESTS}")
        for key, request in requests.items():
            if not isinstance(key, str) or not 0 < len(key) <= MAX_INPUT_KEY_LENGTH:
                raise ValueError(f"an inputRequests key must be 1 to {MAX_INPUT_KEY_LENGTH} long")
            _check_input_request(key, request)
        state = self.state
        if state is not None and (
            not isinstance(state, str) or len(state.encode()) > MAX_STATE_BYTES
        ):
            raise ValueError(f"the state must be a string of at most {MAX_STATE_BYTES} bytes")

    def to_mcp(self) -> dict[str, Any]:
        """The input requests as the result carries them, each with its params."""
        return {
            key: {"method": request["method"], "params": request.get("params", {})}
            for key, request in self.requests.items()
        }


def _check_input_request(key: str, request: Any) -> None:
    if not isinstance(request, dict) or request.get("method") not in INPUT_METHODS:
        raise ValueError(f"inputRequests.{key}.method must be one of {sorted(INPUT_METHODS)}")
    params = request.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"inputRequests.{key}.params must be an object")
    missing = [name for name in _REQUIRED_PARAMS[request["method"]] if name not in params]
    if missing:
        raise ValueError(f"inputRequests.{key}.params lacks {', '.join(missing)}")


# What a provider answers a call with.
ToolAnswer = ToolResult | InputRequired


class ToolError(Exception):
    """A tool refused or failed in a way its caller should read: becomes an ``isError`` result.

    The message is shown to the customer's assistant, so it must say what went wrong in
    plain words and hold nothing internal.
    """

    def __init__(self, message: str, outcome: str = "error") -> None:
        super().__init__(message)
        self.message = message
        # How the call is counted (metrics.backend_call): "error", or "refused", "timeout",
        # "unavailable" when the provider could not reach its backend.
        self.outcome = outcome


class ToolUnavailableError(Exception):
    """The provider behind a tool cannot be reached or loaded; the caller sees a plain message."""


class ToolProvider(Protocol):
    async def call(self, call: ToolCall) -> ToolAnswer: ...
