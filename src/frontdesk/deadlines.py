"""Time limits for tool calls, kept by one timer per event loop instead of one per call.

``asyncio.timeout`` arms a loop timer on entry and cancels it on exit; under uvloop that is
a libuv timer created and torn down for every tool call, the dearest step of a guest
``tools/call``. Tool limits are whole seconds, so one watchdog that wakes every
``TICK`` seconds while calls are running, and cancels the tasks whose limit has passed,
keeps them to within ``TICK`` at a fraction of the cost. The semantics are
``asyncio.timeout``'s: the body is cancelled, and the cancellation leaves the block as
``TimeoutError``; a cancellation from elsewhere passes through untouched. Entering and
leaving a limit never waits, so it is a plain ``with`` block (as anyio's ``fail_after``
is), which spares the two coroutines an ``async with`` would build for every call.

``Deadlines.run`` goes one step further for a call that answers without waiting on
anything (an in-memory lookup, a computed answer): such a call cannot be interrupted, so
it is given no limit at all, and only a call that waits is timed.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


class Deadlines:
    TICK = 0.05

    def __init__(self) -> None:
        self._running: set[Limit] = set()
        # The loop whose watchdog is scheduled, if any (tests run one loop after another).
        self._ticking: asyncio.AbstractEventLoop | None = None

    async def run(self, seconds: float, call: Coroutine[Any, Any, T]) -> T:
        """Await ``call`` within ``seconds``: TimeoutError when it waits longer. Its first
        step is taken here; if that finishes it, no limit is set up (nothing could have
        cut it short), and otherwise the rest runs inside one."""
        try:
            waiting = call.send(None)
        except StopIteration as answered:
            result: T = answered.value
            return result
        with self.limit(seconds):
            return await _resume(call, waiting)

    def limit(self, seconds: float) -> Limit:
        """``with deadlines.limit(seconds):`` raises TimeoutError when the body runs
        longer than ``seconds`` (give or take ``TICK``)."""
        return Limit(self, seconds)

    def _watch(self, limit: Limit, loop: asyncio.AbstractEventLoop) -> None:
        self._running.add(limit)
        if self._ticking is not loop:
            self._ticking = loop
            loop.call_later(self.TICK, self._tick, loop)

    def _forget(self, limit: Limit) -> None:
        self._running.discard(limit)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._ticking is not loop:
            return
        now = loop.time()
        for limit in list(self._running):
            if limit.loop_closed():
                # A loop that ended with a call still inside its limit (a test's loop):
                # nothing is left to cancel there.
                self._running.discard(limit)
            elif limit.loop is loop and limit.deadline <= now:
                self._running.discard(limit)
                limit.expire()
        if self._running:
            loop.call_later(self.TICK, self._tick, loop)
        else:
            self._ticking = None


@types.coroutine
def _resume(call: Coroutine[Any, Any, T], waiting: Any) -> Generator[Any, Any, T]:
    """Await the rest of ``call``, whose first step was taken and gave ``waiting``: what
    ``await`` would have done from there. What the task sends or throws in (a result, a
    cancellation) goes on to ``call``."""
    while True:
        try:
            try:
                sent = yield waiting
            except GeneratorExit:
                call.close()
                raise
            except BaseException as error:
                waiting = call.throw(error)
            else:
                waiting = call.send(sent)
        except StopIteration as done:
            result: T = done.value
            return result


class Limit:
    __slots__ = ("_cancelling", "_deadlines", "_seconds", "_task", "deadline", "expired")

    def __init__(self, deadlines: Deadlines, seconds: float) -> None:
        self._deadlines = deadlines
        self._seconds = seconds
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self.deadline = 0.0
        self.expired = False

    def __enter__(self) -> Limit:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a time limit must be entered inside a task")
        loop = task.get_loop()
        self._task = task
        self._cancelling = task.cancelling()
        self.deadline = loop.time() + self._seconds
        self._deadlines._watch(self, loop)
        return self

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._task.get_loop() if self._task is not None else None

    def loop_closed(self) -> bool:
        loop = self.loop
        return loop is not None and loop.is_closed()

    def expire(self) -> None:
        if self._task is not None and not self._task.done():
            self.expired = True
            self._task.cancel()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: types.TracebackType | None,
    ) -> None:
        self._deadlines._forget(self)
        if not self.expired or self._task is None:
            return
        # Ours was the cancellation, unless another one arrived on top of it.
        if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc
