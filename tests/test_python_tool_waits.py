"""Which python tools are called without a timer (tools/python.py, protocol/tool_calls.py):
only those whose own code has no point where it could wait, since asyncio's timeout can
interrupt a call only there."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from frontdesk.tools.python import never_suspends


async def answers_at_once(arguments: dict[str, Any], _call: object) -> str:
    return str(arguments["text"])


async def sleeps(_arguments: dict[str, Any], _call: object) -> str:
    await asyncio.sleep(0)
    return "done"


async def holds_a_lock(_arguments: dict[str, Any], _call: object) -> str:
    async with asyncio.Lock():
        return "done"


async def iterates(_arguments: dict[str, Any], _call: object) -> str:
    async def numbers() -> Any:
        yield 1

    return str([number async for number in numbers()])


def test_only_a_function_with_no_await_point_never_waits() -> None:
    assert never_suspends(answers_at_once)
    for waits in (sleeps, holds_a_lock, iterates):
        assert not never_suspends(waits), waits.__name__
    # Code it cannot read may wait.
    assert not never_suspends(functools.partial(answers_at_once))
