"""Per-caller limits: the notation, counting in memory and in Redis, and never fatal to
traffic."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import anyio
import pytest
import structlog
from pydantic import ValidationError
from redis.asyncio import Redis
from structlog.typing import EventDict

from frontdesk.companies.files import parse_companies
from frontdesk.config import Settings
from frontdesk.errors import ConfigurationError
from frontdesk.limits import ratelimit
from frontdesk.limits.ratelimit import (
    MemoryCounts,
    RateLimit,
    RateLimiter,
    parse_rate_limit,
    window_key,
)

TWO_AN_HOUR = parse_rate_limit("2/hour")
TWO_A_MINUTE = parse_rate_limit("2/minute")
UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"
HOUR = 3600
# An hour-window's start, far from the real time, so that nothing a test counts in
# Redis meets a counter of another run or of the real clock.
START = 400_000 * HOUR


class Clock:
    """A wall clock the test moves by hand, to step between windows without waiting."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def caller() -> str:
    """A key of its own per test, so counters left in Redis by other runs never count."""
    return f"address:{uuid.uuid4()}"


@pytest.fixture
async def limiters(redis_url: str) -> AsyncIterator[tuple[RateLimiter, RateLimiter]]:
    """Two instances of the service on one clock, as two processes would have them."""
    clock = Clock(START + uuid.uuid4().int % HOUR)
    first = RateLimiter(redis_url, clock=clock)
    second = RateLimiter(redis_url, clock=clock)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


@pytest.fixture
def warnings_logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EventDict]]:
    """What the rate limiter logs during the test."""
    # A logger of its own: one cached by an earlier test would bypass capture_logs.
    monkeypatch.setattr(ratelimit, "log", structlog.get_logger(ratelimit.__name__))
    with structlog.testing.capture_logs() as logs:
        yield logs


# --- the notation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "amount", "seconds"),
    [
        ("100/minute", 100, 60),
        ("100000000/minute", 100_000_000, 60),
        ("10/second", 10, 1),
        ("1/seconds", 1, 1),
        ("20/minutes", 20, 60),
        ("3/hour", 3, 3600),
        ("2/hours", 2, 3600),
        ("5/day", 5, 86400),
        ("7/days", 7, 86400),
        (" 600/minute\n", 600, 60),
    ],
)
def test_the_notation_reads_a_count_per_unit(text: str, amount: int, seconds: int) -> None:
    """Every unit, singular or plural, gives its count and its window in seconds."""
    assert parse_rate_limit(text) == RateLimit(amount=amount, seconds=seconds)


@pytest.mark.parametrize(
    "text",
    [
        "lots per minute",
        "often",
        "",
        "100",
        "/minute",
        "5 per minute",
        "10 / minute",
        "10/Minute",
        "10/2 minutes",
        "1/second; 5/minute",
        "10/week",
        "10/month",
        "10/minutely",
        "-1/minute",
        "1.5/minute",
        "\u0661\u0660/minute",  # Arabic-Indic digits: int() would read them
        "1" * 19 + "/minute",
    ],
)
def test_any_other_notation_is_refused_with_an_example(text: str) -> None:
    """Anything but "<count>/<unit>" is refused, and the error shows what is expected."""
    with pytest.raises(ValueError, match=r'^must read like "120/minute" or "10/second"') as caught:
        parse_rate_limit(text)
    assert repr(text) in str(caught.value)


def test_a_limit_of_nothing_is_refused() -> None:
    """Zero requests a window would refuse every caller: a typo, not a limit."""
    with pytest.raises(ValueError, match="must allow at least 1 request per window, not 0"):
        parse_rate_limit("0/minute")
    with pytest.raises(ValueError, match="at least 1 second"):
        RateLimit(amount=1, seconds=0)


def test_the_settings_refuse_a_limit_they_cannot_read() -> None:
    """A typo in FRONTDESK_*_RATE_LIMIT stops start-up, naming the setting."""
    with pytest.raises(ValidationError, match=r'mcp_rate_limit\n.*must read like "120/minute"'):
        Settings(mcp_rate_limit="600 a minute")
    with pytest.raises(ValidationError, match=r"registration_rate_limit\n.*at least 1 request"):
        Settings(registration_rate_limit="0/minute")


def test_a_companies_file_with_a_limit_of_nothing_is_refused() -> None:
    """The companies file reports the limit at its path, as it does any other mistake."""
    document = {"companies": [{"tenant_key": "acme", "name": "Acme", "rate_limit": "0/hour"}]}
    with pytest.raises(ConfigurationError) as caught:
        parse_companies(document)
    assert str(caught.value).startswith(
        "companies[0].rate_limit: must allow at least 1 request per window"
    )


# --- counting in memory ---------------------------------------------------------------


async def test_memory_limits_a_caller_past_the_limit() -> None:
    """The third hit within the window is refused, until the window ends."""
    limiter = RateLimiter(clock=Clock(START + 600.0))
    key = caller()
    assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
    refused = await limiter.hit(TWO_AN_HOUR, "acme", key)
    assert not refused.allowed
    assert refused.retry_after == HOUR - 600
    assert not limiter.shared


@pytest.mark.parametrize(
    ("into_window", "retry_after"),
    [(0.0, 60), (0.2, 60), (30.5, 30), (59.0, 1), (59.7, 1)],
)
async def test_retry_after_is_the_rest_of_the_window_in_whole_seconds(
    into_window: float, retry_after: int
) -> None:
    """Retry-After rounds up, so a caller who waits it out is in the next window, and is
    never 0."""
    limiter = RateLimiter(clock=Clock(START + into_window))
    key = caller()
    for _ in range(TWO_A_MINUTE.amount):
        await limiter.hit(TWO_A_MINUTE, "acme", key)
    assert await limiter.hit(TWO_A_MINUTE, "acme", key) == ratelimit.Verdict(
        allowed=False, retry_after=retry_after
    )


async def test_a_new_window_allows_the_caller_again() -> None:
    """Windows are fixed: at the next one the caller has the whole allowance again."""
    clock = Clock(START + 59.9)
    limiter = RateLimiter(clock=clock)
    key = caller()
    for _ in range(TWO_A_MINUTE.amount):
        assert (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed
    assert not (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed
    clock.now = START + 60.0
    assert (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed
    assert (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed
    assert not (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed


async def test_callers_and_companies_are_counted_apart() -> None:
    """One caller's hits, or one company's, do not use up another's allowance."""
    limiter = RateLimiter(clock=Clock())
    key = caller()
    await limiter.hit(TWO_AN_HOUR, "acme", key)
    await limiter.hit(TWO_AN_HOUR, "acme", key)
    assert not (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert (await limiter.hit(TWO_AN_HOUR, "acme", caller())).allowed
    assert (await limiter.hit(TWO_AN_HOUR, "globex", key)).allowed


async def test_limits_of_different_lengths_are_counted_apart() -> None:
    """Hits against a per-minute limit do not use up a per-hour one of the same caller."""
    limiter = RateLimiter(clock=Clock())
    key = caller()
    await limiter.hit(TWO_A_MINUTE, "acme", key)
    await limiter.hit(TWO_A_MINUTE, "acme", key)
    assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed


async def test_memory_limits_are_per_instance() -> None:
    """Without Redis each instance counts alone (the documented single-process mode)."""
    clock = Clock()
    first, second = RateLimiter(clock=clock), RateLimiter(clock=clock)
    key = caller()
    await first.hit(TWO_AN_HOUR, "acme", key)
    await first.hit(TWO_AN_HOUR, "acme", key)
    assert (await second.hit(TWO_AN_HOUR, "acme", key)).allowed


def test_a_hit_in_memory_never_yields_to_the_event_loop() -> None:
    """The hot path does its work in one go: the coroutine ends at its first step."""
    limiter = RateLimiter(clock=Clock())
    key = caller()
    for expected in (True, True, False):
        step = limiter.hit(TWO_AN_HOUR, "acme", key)
        with pytest.raises(StopIteration) as finished:
            step.send(None)
        assert finished.value.value.allowed is expected


def test_without_redis_the_verdict_is_given_here_and_shares_the_count() -> None:
    """hit_here answers at once without Redis, counting with hit in the same windows."""
    limiter = RateLimiter(clock=Clock(START + 600.0))
    key = caller()
    assert limiter.hit_here(TWO_AN_HOUR, "acme", key) == ratelimit.Verdict(allowed=True)
    step = limiter.hit(TWO_AN_HOUR, "acme", key)
    with pytest.raises(StopIteration):
        step.send(None)
    assert limiter.hit_here(TWO_AN_HOUR, "acme", key) == ratelimit.Verdict(
        allowed=False, retry_after=HOUR - 600
    )


async def test_with_redis_the_verdict_is_left_to_hit(
    limiters: tuple[RateLimiter, RateLimiter],
) -> None:
    """A count kept in Redis is not counted here: hit_here defers, and counts nothing."""
    first, second = limiters
    key = caller()
    assert first.hit_here(TWO_AN_HOUR, "acme", key) is None
    assert (await second.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert (await first.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert not (await second.hit(TWO_AN_HOUR, "acme", key)).allowed


async def test_while_redis_is_down_the_verdict_is_given_here() -> None:
    """In the degraded spell the count lives in memory, so hit_here answers it."""
    limiter = RateLimiter(UNREACHABLE_REDIS, clock=Clock())
    key = caller()
    try:
        assert limiter.hit_here(TWO_AN_HOUR, "acme", key) is None
        assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
        assert limiter.hit_here(TWO_AN_HOUR, "acme", key) == ratelimit.Verdict(allowed=True)
        refused = limiter.hit_here(TWO_AN_HOUR, "acme", key)
        assert refused == ratelimit.Verdict(allowed=False, retry_after=HOUR)
    finally:
        await limiter.close()


def test_ended_windows_are_dropped_so_memory_stays_bounded() -> None:
    """Many callers over many windows leave the counters of the current windows only."""
    counts = MemoryCounts()
    callers_per_window = 1000
    for minute in range(10):
        now = START + minute * 60.0
        for number in range(callers_per_window):
            counts.count(TWO_A_MINUTE, ("acme", f"address:{minute}:{number}"), now)
            counts.count(TWO_AN_HOUR, ("acme", f"address:{minute}:{number}"), now)
        # This minute's callers, plus every caller of the hour so far.
        assert counts.callers == callers_per_window * (2 + minute)
    counts.count(TWO_AN_HOUR, ("acme", "late"), START + HOUR)
    counts.count(TWO_A_MINUTE, ("acme", "late"), START + HOUR)
    assert counts.callers == 2


# --- counting in Redis ----------------------------------------------------------------


async def test_redis_shares_the_count_between_instances(
    limiters: tuple[RateLimiter, RateLimiter],
) -> None:
    """Hits on one instance count on the other: the limit holds across a fleet."""
    first, second = limiters
    key = caller()
    assert first.shared
    assert (await first.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert (await second.hit(TWO_AN_HOUR, "acme", key)).allowed
    refused = await first.hit(TWO_AN_HOUR, "acme", key)
    assert not refused.allowed
    assert 1 <= refused.retry_after <= HOUR
    assert not (await second.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert (await second.hit(TWO_AN_HOUR, "acme", caller())).allowed
    assert (await second.hit(TWO_AN_HOUR, "globex", key)).allowed


async def test_a_batch_counts_its_calls_in_redis_and_in_memory(
    limiters: tuple[RateLimiter, RateLimiter], redis_url: str
) -> None:
    """Counting two calls at once uses the allowance of two, with the window's expiry set
    by that first count, in Redis as in memory."""
    first, _ = limiters
    key = caller()
    assert (await first.hit(TWO_AN_HOUR, "acme", key, calls=2)).allowed
    assert not (await first.hit(TWO_AN_HOUR, "acme", key)).allowed
    client = Redis.from_url(redis_url)
    try:
        [stored] = [name async for name in client.scan_iter(match=f"frontdesk:rl:*{key}")]
        assert await client.get(stored) == b"3"
        assert 0 < await client.ttl(stored) <= HOUR
    finally:
        await client.aclose()
    memory = RateLimiter()
    assert (await memory.hit(TWO_AN_HOUR, "acme", key, calls=2)).allowed
    assert not (await memory.hit(TWO_AN_HOUR, "acme", key, calls=1)).allowed


async def test_redis_counts_a_new_window_afresh(redis_url: str) -> None:
    """At the next window the caller has the whole allowance again in Redis too."""
    clock = Clock(START + uuid.uuid4().int % 60)
    limiter = RateLimiter(redis_url, clock=clock)
    key = caller()
    try:
        await limiter.hit(TWO_A_MINUTE, "acme", key)
        await limiter.hit(TWO_A_MINUTE, "acme", key)
        assert not (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed
        clock.now = START + 60.0
        assert (await limiter.hit(TWO_A_MINUTE, "acme", key)).allowed
    finally:
        await limiter.close()


async def test_redis_counts_every_request_and_forgets_the_window_after_it(
    limiters: tuple[RateLimiter, RateLimiter], redis_url: str
) -> None:
    """Refused requests count too, and each counter expires within a window's length."""
    first, _ = limiters
    key = caller()
    for _ in range(5):
        await first.hit(TWO_AN_HOUR, "acme", key)
    client = Redis.from_url(redis_url)
    try:
        # The keys of this test alone (its caller is a fresh UUID).
        stored = [name async for name in client.scan_iter(match=f"frontdesk:rl:*{key}")]
        assert len(stored) == 1
        assert await client.get(stored[0]) == b"5"
        assert 0 < await client.ttl(stored[0]) <= HOUR
    finally:
        await client.aclose()


async def test_identities_that_join_alike_are_counted_apart(
    limiters: tuple[RateLimiter, RateLimiter],
) -> None:
    """("a:b", "c") and ("a", "b:c") are different callers, though both read "a:b:c"."""
    first, _ = limiters
    tail = caller()
    assert window_key(TWO_AN_HOUR, ("a:b", tail), START) != window_key(
        TWO_AN_HOUR, ("a", f"b:{tail}"), START
    )
    await first.hit(TWO_AN_HOUR, "a:b", tail)
    await first.hit(TWO_AN_HOUR, "a:b", tail)
    assert (await first.hit(TWO_AN_HOUR, "a", f"b:{tail}")).allowed


async def test_an_unreachable_redis_lets_requests_through_and_warns(
    warnings_logged: list[EventDict],
) -> None:
    """With Redis down, requests are still served, and the outage is logged as a warning
    that names the server but not its password."""
    limiter = RateLimiter("redis://frontdesk:hunter2-secret@127.0.0.1:1/0")
    try:
        started = time.monotonic()
        verdict = await limiter.hit(TWO_AN_HOUR, "acme", caller())
        elapsed = time.monotonic() - started
        assert verdict.allowed
        # The outage is noticed: the next verdicts are given here, from memory.
        assert limiter.hit_here(TWO_AN_HOUR, "acme", caller()) == ratelimit.Verdict(allowed=True)
    finally:
        await limiter.close()
    assert elapsed < 1.0
    warnings = [entry for entry in warnings_logged if entry["log_level"] == "warning"]
    assert [entry["event"] for entry in warnings] == ["rate_limit_storage_unavailable"]
    assert "127.0.0.1:1" in str(warnings[0]["error"])
    assert "hunter2-secret" not in str(warnings_logged)


async def test_an_unreachable_redis_degrades_to_counting_in_memory() -> None:
    """During an outage the limit still holds, per instance, instead of vanishing."""
    limiter = RateLimiter(UNREACHABLE_REDIS, clock=Clock())
    key = caller()
    try:
        assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
        assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
        refused = await limiter.hit(TWO_AN_HOUR, "acme", key)
        assert refused == ratelimit.Verdict(allowed=False, retry_after=HOUR)
    finally:
        await limiter.close()


async def test_an_outage_is_logged_once_however_many_requests_meet_it(
    warnings_logged: list[EventDict],
) -> None:
    """Requests in flight together when Redis fails make one warning, not one each."""
    limiter = RateLimiter(UNREACHABLE_REDIS)
    verdicts: list[ratelimit.Verdict] = []

    async def call() -> None:
        verdicts.append(await limiter.hit(TWO_AN_HOUR, "acme", caller()))

    try:
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(call)
        for _ in range(5):
            await call()
    finally:
        await limiter.close()
    assert [verdict.allowed for verdict in verdicts] == [True] * 25
    assert [entry["event"] for entry in warnings_logged] == ["rate_limit_storage_unavailable"]


async def test_redis_is_tried_again_once_the_degraded_spell_is_over(
    warnings_logged: list[EventDict],
) -> None:
    """After its spell in memory the limiter asks Redis again (and warns again if it is
    still down), so that the shared limit comes back on its own."""
    limiter = RateLimiter(UNREACHABLE_REDIS, retry_shared_after=0.0)
    try:
        await limiter.hit(TWO_AN_HOUR, "acme", caller())
        await limiter.hit(TWO_AN_HOUR, "acme", caller())
    finally:
        await limiter.close()
    assert [entry["event"] for entry in warnings_logged] == ["rate_limit_storage_unavailable"] * 2


async def test_a_memory_limiter_has_nothing_to_close() -> None:
    """Without Redis, close is a no-op: the limiter still counts afterwards."""
    limiter = RateLimiter()
    await limiter.close()
    assert limiter.hit_here(TWO_AN_HOUR, "acme", caller()) == ratelimit.Verdict(allowed=True)


def test_the_service_loads_no_redis_client_unless_configured() -> None:
    """Without a Redis URL no worker pays the memory of the Redis client or of ``limits``."""
    program = (
        "import sys\n"
        "import frontdesk.app\n"
        "from frontdesk.limits.ratelimit import RateLimiter\n"
        "RateLimiter(None)\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'redis', 'limits'}))\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60
    )
    assert finished.stdout.strip() == "[]"
