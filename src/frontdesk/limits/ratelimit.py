"""Per-caller request limits: in memory by default, shared through Redis when configured.

Fixed windows cost one counter increment per request, the least a limit can cost on the
hot path. Every request is counted, refused ones included, per caller identity, in windows
aligned on the wall clock (window index = time // seconds), so every instance agrees on
where a window starts and ends.

The counting is our own rather than the ``limits`` library's, for its cost per request
and the Redis client it imported with no Redis configured; docs/decisions/rate-limiter.md
has the figures and finds them below the bar for code of our own (to be measured again, or
replaced). Here a request counted in memory is a few dict operations, and the Redis client
is imported only when a Redis URL is configured.

When Redis cannot be reached the limiter keeps counting in this instance's memory for a
few seconds at a time, so a Redis outage loosens the limit to per-instance instead of
refusing traffic.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import structlog

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

log = structlog.get_logger(__name__)

Clock = Callable[[], float]
Identity = tuple[str, ...]

SECONDS_PER_UNIT: Final = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
# The one notation the project and its documentation use ("120/minute"), with the unit
# singular or plural. Eighteen digits are far more than any limit needs and keep the
# number well inside Redis's 64-bit counters.
NOTATION: Final = re.compile(r"([0-9]{1,18})/(second|minute|hour|day)s?")
EXAMPLE: Final = 'must read like "120/minute" or "10/second"'

# How long an instance counts in its own memory after Redis failed, before trying again:
# short enough that the shared limit comes back soon, long enough that a dead Redis is
# not asked on every request.
RETRY_SHARED_AFTER_SECONDS: Final = 5.0
# A Redis that does not answer within this is treated as down: the request is counted in
# memory instead of waiting on it.
REDIS_TIMEOUT_SECONDS: Final = 0.5
KEY_PREFIX: Final = "frontdesk:rl"
# INCRBY and the expiry of a window's first hits in one atomic round trip; the expiry (one
# window long, which outlasts what is left of the window) keeps Redis from growing.
INCREMENT_SCRIPT: Final = """
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
if hits == tonumber(ARGV[2]) then
    redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return hits
"""


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``amount`` requests per caller in each window of ``seconds``."""

    amount: int
    seconds: int

    def __post_init__(self) -> None:
        if self.amount < 1:
            raise ValueError(f"must allow at least 1 request per window, not {self.amount}")
        if self.seconds < 1:
            raise ValueError(f"a window must last at least 1 second, not {self.seconds}")


def parse_rate_limit(text: str) -> RateLimit:
    """Read "120/minute": a whole number, a slash, then second, minute, hour or day."""
    match = NOTATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f'{EXAMPLE} (a whole number, "/", then second, minute, hour or day), not {text!r}'
        )
    amount, unit = match.groups()
    return RateLimit(amount=int(amount), seconds=SECONDS_PER_UNIT[unit])


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    # Whole seconds until the window ends, at least 1, when the request is refused.
    retry_after: int = 0


ALLOWED = Verdict(allowed=True)


def _verdict(limit: RateLimit, hits: int, now: float) -> Verdict:
    if hits <= limit.amount:
        return ALLOWED
    return Verdict(allowed=False, retry_after=seconds_left_in_window(limit, now))


def seconds_left_in_window(limit: RateLimit, now: float) -> int:
    return max(1, math.ceil(limit.seconds - now % limit.seconds))


class MemoryCounts:
    """This instance's hits per caller, one dict per (window length, window index).

    A window that has ended is dropped whole when the next window of its length opens,
    so memory holds at most two windows of callers per limit length, whatever the number
    of callers, and no request ever scans the counters.
    """

    def __init__(self) -> None:
        self._windows: dict[tuple[int, int], dict[Identity, int]] = {}

    def count(self, limit: RateLimit, identity: Identity, now: float, calls: int = 1) -> int:
        """Count ``calls`` hits and return the hits of this caller in the current window."""
        window = (limit.seconds, int(now // limit.seconds))
        counts = self._windows.get(window)
        if counts is None:
            counts = self._open(window)
        hits = counts.get(identity, 0) + calls
        counts[identity] = hits
        return hits

    def _open(self, window: tuple[int, int]) -> dict[Identity, int]:
        seconds, index = window
        # Only a handful of windows are open (about one per limit length), so looking
        # through them here, once per window, is cheap.
        for ended in [open_ for open_ in self._windows if open_[0] == seconds and open_[1] < index]:
            del self._windows[ended]
        counts: dict[Identity, int] = {}
        self._windows[window] = counts
        return counts

    @property
    def callers(self) -> int:
        """How many caller counters are held, over every open window."""
        return sum(len(counts) for counts in self._windows.values())


class RedisCounts:
    """Hits per caller in Redis, shared by every instance pointed at it."""

    def __init__(self, url: str) -> None:
        # Imported here, not at the top, so that an instance without Redis never loads it.
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import RedisError

        # What a failing Redis raises: its own errors, and the socket's (timeouts included).
        self.failures: tuple[type[Exception], ...] = (RedisError, OSError)
        self._client: Redis = Redis.from_url(
            url,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            # One immediate retry on a broken connection, as a pooled connection is after
            # Redis restarts; none on a timeout, which would only double the wait.
            retry=Retry(NoBackoff(), 1, (RedisConnectionError,)),
        )
        self._increment: AsyncScript = self._client.register_script(INCREMENT_SCRIPT)

    async def count(self, limit: RateLimit, identity: Identity, now: float, calls: int = 1) -> int:
        """Count ``calls`` hits and return the hits of this caller in the current window."""
        key = window_key(limit, identity, now)
        return int(await self._increment(keys=[key], args=[limit.seconds, calls]))

    async def close(self) -> None:
        await self._client.aclose()


def window_key(limit: RateLimit, identity: Identity, now: float) -> str:
    """The Redis key of one caller's counter in the current window.

    Each identity part is prefixed with its length, so no two identities share a key
    whatever characters they hold (``("a:b", "c")`` and ``("a", "b:c")`` differ).
    """
    window = int(now // limit.seconds)
    caller = ":".join(f"{len(part)}:{part}" for part in identity)
    return f"{KEY_PREFIX}:{limit.seconds}:{window}:{caller}"


class RateLimiter:
    def __init__(
        self,
        redis_url: str | None = None,
        *,
        clock: Clock = time.time,
        retry_shared_after: float = RETRY_SHARED_AFTER_SECONDS,
    ) -> None:
        # The wall clock places the windows, so that instances agree on them; tests pass
        # a clock of their own to move between windows without waiting.
        self._clock = clock
        self._memory = MemoryCounts()
        self._shared = RedisCounts(redis_url) if redis_url else None
        self._retry_shared_after = retry_shared_after
        # On the monotonic clock, which a wall-clock step cannot move.
        self._degraded_until = 0.0

    @property
    def shared(self) -> bool:
        return self._shared is not None

    def hit_here(self, limit: RateLimit, *identity: str, calls: int = 1) -> Verdict | None:
        """Count ``calls`` (a request, or a batch's further members) and give the verdict
        when this instance counts on its own (no Redis, or Redis failing); None when the
        count lives in Redis and ``hit`` must be awaited. Without Redis every request is
        answered here, with no coroutine."""
        if self._shared is not None and time.monotonic() >= self._degraded_until:
            return None
        return self._count_in_memory(limit, identity, calls)

    async def hit(self, limit: RateLimit, *identity: str, calls: int = 1) -> Verdict:
        """Count ``calls`` of this caller, and say whether they are within the limit."""
        shared = self._shared
        if shared is None or time.monotonic() < self._degraded_until:
            return self._count_in_memory(limit, identity, calls)
        now = self._clock()
        try:
            hits = await shared.count(limit, identity, now, calls)
        except shared.failures as error:
            self._degrade(error)
            hits = self._memory.count(limit, identity, now, calls)
        return _verdict(limit, hits, now)

    def _count_in_memory(self, limit: RateLimit, identity: Identity, calls: int) -> Verdict:
        now = self._clock()
        return _verdict(limit, self._memory.count(limit, identity, now, calls), now)

    def _degrade(self, error: Exception) -> None:
        """Count in memory for a while rather than fail the request, and say so once."""
        moment = time.monotonic()
        # Requests already waiting on Redis when it failed fail too: one warning is enough.
        if moment < self._degraded_until:
            return
        self._degraded_until = moment + self._retry_shared_after
        log.warning("rate_limit_storage_unavailable", error=str(error))

    async def close(self) -> None:
        """Let go of the Redis connections, so that none is left open at shut-down."""
        if self._shared is not None:
            await self._shared.close()
