"""The one async protocol every tool provider speaks, and what a call carries in and out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from frontdesk.domain import Customer

ContentBlock = dict[str, Any]


class ToolCall(NamedTuple):
    """One call of one tool, as a provider receives it.

    Immutable, as a tuple: one is built per call, and a tuple costs a third of what a
    frozen dataclass does to build.
    """

    tenant_key: str
    tool: str
    arguments: Mapping[str, Any]
    customer: Customer | None
    request_id: str


@dataclass(slots=True)
class ToolResult:
    """What a tool answered, in MCP's terms (content blocks, structured content, isError).

    Not frozen: every call builds one, a frozen dataclass costs three times as much to
    build, and nothing keeps a result after it is answered.
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


class ToolError(Exception):
    """A tool refused or failed in a way its caller should read: becomes an ``isError`` result.

    The message is shown to the customer's assistant, so it must say what went wrong in
    plain words and hold nothing internal.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolUnavailableError(Exception):
    """The provider behind a tool cannot be reached or loaded; the caller sees a plain message."""


class ToolProvider(Protocol):
    async def call(self, call: ToolCall) -> ToolResult: ...
