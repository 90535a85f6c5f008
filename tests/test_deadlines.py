"""Tool time limits (frontdesk.deadlines): asyncio.timeout's semantics on a shared timer."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from frontdesk.deadlines import Deadlines


async def test_a_body_past_its_limit_ends_with_timeout_error_near_the_limit() -> None:
    deadlines = Deadlines()
    started = time.monotonic()
    with pytest.raises(TimeoutError), deadlines.limit(0.2):
        await asyncio.sleep(5)
    elapsed = time.monotonic() - started
    assert 0.2 <= elapsed < 0.2 + 3 * Deadlines.TICK


async def test_a_body_within_its_limit_returns_and_is_never_cancelled() -> None:
    deadlines = Deadlines()
    with deadlines.limit(0.2):
        await asyncio.sleep(0.01)
    # Well past the limit: nothing is left to cancel this task.
    await asyncio.sleep(0.3)
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


async def test_a_cancellation_from_elsewhere_passes_through_as_cancellation() -> None:
    deadlines = Deadlines()
    entered = asyncio.Event()

    async def call() -> None:
        with deadlines.limit(10):
            entered.set()
            await asyncio.sleep(5)

    task = asyncio.create_task(call())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_limits_of_concurrent_calls_are_kept_apart() -> None:
    deadlines = Deadlines()

    async def call(seconds: float, limit: float) -> str:
        try:
            with deadlines.limit(limit):
                await asyncio.sleep(seconds)
        except TimeoutError:
            return "timed out"
        return "done"

    outcomes = await asyncio.gather(call(0.01, 0.2), call(1, 0.1), call(0.05, 0.3), call(1, 0.2))
    assert list(outcomes) == ["done", "timed out", "done", "timed out"]


async def test_a_body_that_swallows_the_cancellation_leaves_the_task_uncancelled() -> None:
    deadlines = Deadlines()
    with deadlines.limit(0.05), contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(5)
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    await asyncio.sleep(0)


async def test_the_watchdog_stops_when_nothing_runs_and_starts_again() -> None:
    deadlines = Deadlines()
    with deadlines.limit(1):
        await asyncio.sleep(0)
    await asyncio.sleep(3 * Deadlines.TICK)
    with pytest.raises(TimeoutError), deadlines.limit(0.05):
        await asyncio.sleep(5)


def test_a_limit_left_behind_by_a_closed_loop_does_not_stop_the_next_loop() -> None:
    """A loop that ends mid-call leaves its limit behind; the next loop's watchdog goes on."""
    deadlines = Deadlines()

    async def stuck() -> None:
        entered = asyncio.Event()

        async def call() -> None:
            with deadlines.limit(0.01):
                entered.set()
                await asyncio.sleep(60)

        task = asyncio.get_running_loop().create_task(call())
        # Abandoned on purpose, with its loop: asyncio need not report it when collected.
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        await entered.wait()

    first = asyncio.new_event_loop()
    first.run_until_complete(stuck())
    first.close()

    async def timed_out() -> bool:
        try:
            with deadlines.limit(0.05):
                await asyncio.sleep(5)
        except TimeoutError:
            return True
        return False

    second = asyncio.new_event_loop()
    try:
        assert second.run_until_complete(timed_out())
    finally:
        second.close()


# Deadlines.run: the same limit, set up only for a call that waits -------------------------


async def _answer_at_once(value: str) -> str:
    return value


async def _fail_at_once() -> str:
    raise LookupError("no such thing")


async def test_a_call_that_answers_without_waiting_is_answered_and_never_timed() -> None:
    deadlines = Deadlines()
    assert await deadlines.run(0.01, _answer_at_once("hello")) == "hello"
    assert not deadlines._running
    with pytest.raises(LookupError, match="no such thing"):
        await deadlines.run(0.01, _fail_at_once())


async def test_a_call_that_waits_gets_what_it_waited_for() -> None:
    deadlines = Deadlines()
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[int] = loop.create_future()
    loop.call_later(0.01, ready.set_result, 41)

    async def call() -> int:
        await asyncio.sleep(0)
        value = await ready
        try:
            await asyncio.sleep(0.01)
            raise ValueError("after waiting")
        except ValueError:
            return value + 1

    assert await deadlines.run(1, call()) == 42
    assert not deadlines._running


async def test_a_call_that_waits_past_its_limit_ends_with_timeout_error() -> None:
    deadlines = Deadlines()
    ended = asyncio.Event()

    async def call() -> str:
        try:
            await asyncio.sleep(5)
        finally:
            ended.set()
        return "never"

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await deadlines.run(0.1, call())
    assert ended.is_set()
    assert time.monotonic() - started < 0.1 + 3 * Deadlines.TICK


async def test_a_cancelled_run_cancels_the_call_and_passes_the_cancellation_on() -> None:
    deadlines = Deadlines()
    entered = asyncio.Event()
    seen: list[str] = []

    async def call() -> str:
        entered.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    task = asyncio.create_task(deadlines.run(10, call()))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]
