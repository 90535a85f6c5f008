"""Helpers for the tests of the grant-change feed (store.change_feed): its listening
sessions as PostgreSQL lists them, and waiting for what the feed does in the background."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import asyncpg

from frontdesk.store.change_feed import APPLICATION_NAME

# pg_stat_activity lists the whole cluster's sessions: only this test's database counts.
_LISTENING = "FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()"


async def listening_sessions(sql: asyncpg.Connection) -> int:
    count: int = await sql.fetchval(f"SELECT count(*) {_LISTENING}", APPLICATION_NAME)
    return count


async def end_listening_sessions(sql: asyncpg.Connection) -> int:
    """Terminate every feed's session on this database, as a server restart would."""
    ended = await sql.fetch(f"SELECT pg_terminate_backend(pid) {_LISTENING}", APPLICATION_NAME)
    return sum(1 for row in ended if row[0])


async def until(condition_met: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition_met():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.01)
