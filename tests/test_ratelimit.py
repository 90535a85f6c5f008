"""Per-caller limits: counted in memory, shared through Redis, and never fatal to traffic."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import structlog
from limits import parse

from frontdesk import ratelimit
from frontdesk.ratelimit import RateLimiter

TWO_AN_HOUR = parse("2/hour")
UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"


def caller() -> str:
    """A key of its own per test, so counters left in Redis by other runs never count."""
    return f"address:{uuid.uuid4()}"


@pytest.fixture
async def limiters(redis_url: str) -> AsyncIterator[tuple[RateLimiter, RateLimiter]]:
    """Two instances of the service, as two processes would have them."""
    first, second = RateLimiter(redis_url), RateLimiter(redis_url)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def test_memory_limits_a_caller_past_the_limit() -> None:
    """The third hit within the window is refused, with a Retry-After inside the window."""
    limiter = RateLimiter()
    key = caller()
    assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
    assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
    refused = await limiter.hit(TWO_AN_HOUR, "acme", key)
    assert not refused.allowed
    assert 1 <= refused.retry_after <= 3600
    assert not limiter.shared


async def test_callers_and_companies_are_counted_apart() -> None:
    """One caller's hits, or one company's, do not use up another's allowance."""
    limiter = RateLimiter()
    key = caller()
    await limiter.hit(TWO_AN_HOUR, "acme", key)
    await limiter.hit(TWO_AN_HOUR, "acme", key)
    assert (await limiter.hit(TWO_AN_HOUR, "acme", caller())).allowed
    assert (await limiter.hit(TWO_AN_HOUR, "globex", key)).allowed


async def test_memory_limits_are_per_instance() -> None:
    """Without Redis each instance counts alone (the documented single-process mode)."""
    first, second = RateLimiter(), RateLimiter()
    key = caller()
    await first.hit(TWO_AN_HOUR, "acme", key)
    await first.hit(TWO_AN_HOUR, "acme", key)
    assert (await second.hit(TWO_AN_HOUR, "acme", key)).allowed


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
    assert 1 <= refused.retry_after <= 3600
    assert not (await second.hit(TWO_AN_HOUR, "acme", key)).allowed


async def test_a_reachable_redis_answers_the_ping(
    limiters: tuple[RateLimiter, RateLimiter],
) -> None:
    """ping reports a working shared store."""
    assert await limiters[0].ping()


async def test_an_unreachable_redis_lets_requests_through_and_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With Redis down, requests are still served, and the outage is logged as a warning."""
    # A logger of its own: one cached by an earlier test would bypass capture_logs.
    monkeypatch.setattr(ratelimit, "log", structlog.get_logger(ratelimit.__name__))
    limiter = RateLimiter(UNREACHABLE_REDIS)
    try:
        with structlog.testing.capture_logs() as logs:
            verdict = await limiter.hit(TWO_AN_HOUR, "acme", caller())
        assert verdict.allowed
        assert await limiter.ping() is False
    finally:
        await limiter.close()
    warnings = [entry for entry in logs if entry["log_level"] == "warning"]
    assert [entry["event"] for entry in warnings] == ["rate_limit_storage_unavailable"]
    assert "127.0.0.1:1" in warnings[0]["error"]


async def test_an_unreachable_redis_degrades_to_counting_in_memory() -> None:
    """During an outage the limit still holds, per instance, instead of vanishing."""
    limiter = RateLimiter(UNREACHABLE_REDIS)
    key = caller()
    try:
        assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
        assert (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
        assert not (await limiter.hit(TWO_AN_HOUR, "acme", key)).allowed
    finally:
        await limiter.close()


async def test_a_memory_limiter_has_nothing_to_ping_or_close() -> None:
    """Without Redis, ping is always true and close is a no-op."""
    limiter = RateLimiter()
    assert await limiter.ping()
    await limiter.close()
