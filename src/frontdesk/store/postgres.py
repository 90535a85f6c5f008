"""A plain asyncpg pool beside SQLAlchemy's, for the statements on the hot path.

Every signed-in MCP call looks its access token up, and every refresh grant spends one
token and writes the next pair. Through SQLAlchemy's async layer each of those costs
several hundred microseconds of Python (statement building, cache keys, a greenlet per
call, result wrapping) on top of a round trip that PostgreSQL answers in tens. These few
statements are written as SQL once and run straight on asyncpg, which prepares each one per
connection and reuses it; everything else keeps SQLAlchemy and its portable schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy.engine import make_url

from frontdesk.store.outage import OUTAGE_SQLSTATES


class DatabaseUnavailable(ConnectionError):
    """PostgreSQL is down, restarting or refusing connections: answered 503 (store.outage)."""


def driver_dsn(url: str) -> str:
    """The SQLAlchemy URL (``postgresql+asyncpg://…``) as a DSN asyncpg itself reads."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _keep_session(_connection: asyncpg.Connection) -> None:
    # asyncpg's default reset sends a RESET ALL / UNLISTEN / CLOSE ALL query on every
    # release: a round trip per statement. These statements change no session state, and
    # asyncpg still rolls back a transaction left open before this is called.
    return None


class DriverPool:
    """Opened on first use, so a process that never runs a hot statement opens nothing."""

    def __init__(self, url: str, max_size: int) -> None:
        self._dsn = driver_dsn(url)
        self._max_size = max_size
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()

    async def _opened(self) -> asyncpg.Pool:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=self._max_size,
                    reset=_keep_session,
                    max_inactive_connection_lifetime=300.0,
                )
            return self._pool

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[PoolConnectionProxy[asyncpg.Record]]:
        """A pooled connection; a lost or refused server is raised as DatabaseUnavailable."""
        try:
            pool = await self._opened()
            async with pool.acquire() as connection:
                yield connection
        except (OSError, TimeoutError, asyncpg.ConnectionDoesNotExistError) as error:
            raise DatabaseUnavailable(str(error) or type(error).__name__) from error
        except asyncpg.PostgresError as error:
            if str(error.sqlstate or "").startswith(OUTAGE_SQLSTATES):
                raise DatabaseUnavailable(str(error)) from error
            raise

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
