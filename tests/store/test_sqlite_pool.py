"""SQLite's connection pool: a few connections (each has a thread of its own), kept, never more."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import event, text

from frontdesk.store.database import SQLITE_CONNECTIONS, Database


async def test_concurrent_calls_share_a_few_connections_and_keep_them(tmp_path: Path) -> None:
    """32 concurrent reads, twice: at most SQLITE_CONNECTIONS connections are ever opened,
    and the second burst opens none (overflow connections, opened and closed per burst,
    each started a thread that left a malloc arena behind)."""
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}")
    opened: list[Any] = []
    event.listen(
        database.engine.sync_engine, "connect", lambda dbapi, _record: opened.append(dbapi)
    )
    in_use = 0
    most_in_use = 0

    async def read() -> None:
        nonlocal in_use, most_in_use
        async with database.engine.connect() as connection:
            in_use += 1
            most_in_use = max(most_in_use, in_use)
            await connection.execute(text("SELECT 1"))
            await asyncio.sleep(0.01)
            in_use -= 1

    try:
        await asyncio.gather(*(read() for _ in range(32)))
        first_burst = len(opened)
        await asyncio.gather(*(read() for _ in range(32)))
    finally:
        await database.close()

    assert most_in_use == SQLITE_CONNECTIONS
    assert first_burst == SQLITE_CONNECTIONS
    assert len(opened) == first_burst


async def test_a_database_in_memory_still_works() -> None:
    """In memory, SQLAlchemy's own pool keeps the one connection holding the database."""
    database = Database("sqlite+aiosqlite:///:memory:")
    try:
        async with database.engine.begin() as connection:
            await connection.execute(text("CREATE TABLE t (x INTEGER)"))
            await connection.execute(text("INSERT INTO t VALUES (1)"))
        async with database.engine.connect() as connection:
            assert (await connection.execute(text("SELECT x FROM t"))).scalar_one() == 1
    finally:
        await database.close()
