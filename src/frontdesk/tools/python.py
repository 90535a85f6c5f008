"""The ``python`` provider: a tool answered by an importable async callable.

The callable takes ``(arguments, call)`` and returns a ``str`` (one text block), a ``dict``
(structured content, echoed as JSON text for clients that read only text), a ``ToolResult``,
or ``InputRequired`` to ask the customer's client first (``call.input_methods`` says what it
can answer; the call comes again with ``call.input_responses`` and ``call.state``). Raising
``ToolError`` makes an ``isError`` result with its message.
"""

from __future__ import annotations

import dis
import importlib
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson

from frontdesk.tools.provider import (
    InputRequired,
    ToolAnswer,
    ToolCall,
    ToolResult,
    ToolUnavailableError,
)

ToolOutput = str | dict[str, Any] | ToolResult | InputRequired
ToolFunction = Callable[[Mapping[str, Any], ToolCall], Awaitable[ToolOutput]]


def resolve(target: str) -> Callable[..., Any]:
    """Import ``module.path:attribute``; raise ToolUnavailableError saying what is missing."""
    module_name, _, attribute_path = target.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ToolUnavailableError(f"cannot import module {module_name!r}: {error}") from None
    for attribute in attribute_path.split("."):
        try:
            value = getattr(value, attribute)
        except AttributeError:
            raise ToolUnavailableError(f"{module_name!r} has no {attribute_path!r}") from None
    if not callable(value):
        raise ToolUnavailableError(f"{target!r} is not callable")
    return value  # type: ignore[no-any-return]


def resolve_coroutine_function(target: str) -> Callable[..., Any]:
    function = resolve(target)
    if not inspect.iscoroutinefunction(function):
        raise ToolUnavailableError(f"{target!r} must be an async function")
    return function


def as_tool_result(output: object) -> ToolResult:
    if isinstance(output, ToolResult):
        return output
    if isinstance(output, str):
        return ToolResult.text(output)
    if isinstance(output, dict):
        text = orjson.dumps(output).decode()
        return ToolResult(content=[{"type": "text", "text": text}], structured=output)
    raise TypeError(f"a python tool returned {type(output).__name__}, not str, dict or ToolResult")


def never_suspends(function: Callable[..., Any]) -> bool:
    """Whether an async function's own code has no point where it could wait: no ``await``,
    ``async for`` or ``async with`` (each compiles to a SEND and a YIELD_VALUE). Only a
    plain function's code is read; anything else (a partial, a callable object) may wait."""
    code = getattr(function, "__code__", None)
    if not inspect.isfunction(function) or code is None:
        return False
    return not any(
        instruction.opname in ("SEND", "YIELD_VALUE") for instruction in dis.get_instructions(code)
    )


class PythonToolProvider:
    """Calls one resolved function; resolution happens once, when the company is loaded."""

    __slots__ = ("_function", "never_waits")

    def __init__(self, target: str) -> None:
        self._function: ToolFunction = resolve_coroutine_function(target)
        # A call that never waits cannot be timed out: asyncio's timeout interrupts a task
        # only where it waits (protocol.tool_calls sets no timer around it).
        self.never_waits = never_suspends(self._function)

    async def call(self, call: ToolCall) -> ToolAnswer:
        output = await self._function(call.arguments, call)
        if isinstance(output, InputRequired):
            return output
        return as_tool_result(output)
