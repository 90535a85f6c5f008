"""Every wait on the database bounded (store.bounds): on PostgreSQL the server keeps the
same statement bound on every session Frontdesk opens, while migrations are not held to it."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from frontdesk.config import Settings
from frontdesk.store.bounds import Timeouts
from frontdesk.store.database import Database

pytestmark = pytest.mark.postgres


def test_one_setting_bounds_every_wait() -> None:
    """Statements get the operator's bound; connecting and queueing at most 3 s of it."""
    assert Timeouts.within(5.0) == Timeouts(statement=5.0, connect=3.0, acquire=3.0)
    assert Timeouts.within(1.0) == Timeouts(statement=1.0, connect=1.0, acquire=1.0)
    assert Settings().database_timeout_seconds == 5.0
    assert Timeouts(statement=2.5).server_settings() == {
        "statement_timeout": "2500",
        "idle_in_transaction_session_timeout": "5000",
    }


async def test_every_session_carries_the_server_side_bounds(postgres_url: str) -> None:
    """SQLAlchemy's sessions, both asyncpg pools' and the change feed's: the server stops
    a statement nobody waits for any more, and ends a transaction left idle."""
    database = Database(postgres_url, timeouts=Timeouts.within(4.0))
    try:
        async with database.engine.connect() as connection:
            shown = await connection.execute(text("SHOW statement_timeout"))
            assert shown.scalar_one() == "4s"
            shown = await connection.execute(text("SHOW idle_in_transaction_session_timeout"))
            assert shown.scalar_one() == "8s"
        for pool in (database.driver_pool, database.lookup_pool):
            assert pool is not None
            async with pool.connection() as borrowed:
                assert await borrowed.fetchval("SHOW statement_timeout") == "4s"
    finally:
        await database.close()


async def test_a_statement_past_the_bound_is_stopped_and_answered_as_an_outage(
    postgres_url: str,
) -> None:
    """A statement running past the bound ends (a 503 for the request) and the engine
    serves the next one."""
    from frontdesk.store.outage import is_outage

    database = Database(postgres_url, timeouts=Timeouts.within(0.3))
    try:
        with pytest.raises(Exception) as raised:  # noqa: PT011 - is_outage judges it
            async with database.engine.connect() as connection:
                await connection.execute(text("SELECT pg_sleep(3)"))
        assert is_outage(raised.value)
        await database.ping()
    finally:
        await database.close()


async def test_migrations_are_not_held_to_the_statement_bound(postgres_url: str) -> None:
    """A migration may take long on a large table: it runs on a session of its own."""
    database = Database(postgres_url, timeouts=Timeouts(statement=0.001))
    try:
        await database.migrate()
    finally:
        await database.close()
