"""Per-caller request limits: in memory by default, shared through Redis when configured.

Fixed windows cost one counter increment per request, the least a limit can cost on the
hot path. When Redis cannot be reached the limiter keeps counting in this instance's
memory, so a Redis outage loosens the limit to per-instance instead of refusing traffic.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import structlog
from limits import RateLimitItem
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.storage.redis.redispy import RedispyBridge
from limits.aio.strategies import FixedWindowRateLimiter
from limits.errors import StorageError
from redis.asyncio import Redis

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    retry_after: int = 0


ALLOWED = Verdict(allowed=True)


class RateLimiter:
    def __init__(self, redis_url: str | None = None) -> None:
        self._memory = FixedWindowRateLimiter(MemoryStorage())
        self._shared: FixedWindowRateLimiter | None = None
        self._shared_storage: Storage | None = None
        if redis_url:
            self._shared_storage = RedisStorage(
                "async+" + redis_url, implementation="redispy", wrap_exceptions=True
            )
            self._shared = FixedWindowRateLimiter(self._shared_storage)
        self._degraded_until = 0.0

    @property
    def shared(self) -> bool:
        return self._shared is not None

    async def hit(self, limit: RateLimitItem, *identity: str) -> Verdict:
        limiter = self._pick()
        try:
            if await limiter.hit(limit, *identity):
                return ALLOWED
            reset_at, _ = await limiter.get_window_stats(limit, *identity)
        except StorageError as error:
            # Redis is down: count here for a while rather than fail the request.
            self._degraded_until = time.monotonic() + 5.0
            log.warning("rate_limit_storage_unavailable", error=str(error.storage_error))
            return await self.hit(limit, *identity)
        return Verdict(allowed=False, retry_after=max(1, math.ceil(reset_at - time.time())))

    def _pick(self) -> FixedWindowRateLimiter:
        if self._shared is not None and time.monotonic() >= self._degraded_until:
            return self._shared
        return self._memory

    async def close(self) -> None:
        """Let go of the Redis connections, so that none is left open at shut-down."""
        storage = self._shared_storage
        if isinstance(storage, RedisStorage) and isinstance(storage.bridge, RedispyBridge):
            client = storage.bridge.get_connection()
            if isinstance(client, Redis):
                await client.aclose()

    async def ping(self) -> bool:
        if self._shared_storage is None:
            return True
        try:
            return await self._shared_storage.check()
        except StorageError:
            return False
