"""Waiting on a condition with a deadline, in place of a fixed sleep.

A fixed sleep is either too short on a loaded machine (the test fails for no reason) or
longer than needed everywhere else (the suite pays for it on every run). These poll a
condition often and give up, naming what they waited for, at a deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

POLL_INTERVAL = 0.01


def wait_until(condition: Callable[[], bool], deadline: float, what: str) -> None:
    """Return once ``condition()`` holds; fail after ``deadline`` seconds naming ``what``."""
    give_up = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"not within {deadline}s: {what}")
        time.sleep(POLL_INTERVAL)


async def eventually(condition: Callable[[], Awaitable[bool]], deadline: float, what: str) -> None:
    """``wait_until`` for a condition that must be awaited (a query, a request)."""
    give_up = time.monotonic() + deadline
    while not await condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"not within {deadline}s: {what}")
        await asyncio.sleep(POLL_INTERVAL)
