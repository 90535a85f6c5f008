"""asyncpg's pool for the hot statements (store.postgres.AsyncpgPool), on the real
PostgreSQL: bounded in size and in every wait, never lending a connection left
mid-statement, and raising an outage as DatabaseUnavailable."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from frontdesk.store import postgres
from frontdesk.store.bounds import Timeouts
from frontdesk.store.postgres import AsyncpgPool, DatabaseUnavailable, driver_dsn
from tests.support.waiting import eventually

REFUSED = "postgresql+asyncpg://postgres@127.0.0.1:1/none"


async def backends(postgres_url: str) -> int:
    """Sessions open on the test's database, not counting the one asking."""
    observer = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        count = await observer.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await observer.close()
    return int(count)


async def terminate_backend(postgres_url: str, pid: int) -> None:
    killer = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        await killer.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await killer.close()


@pytest.fixture
async def single(postgres_url: str) -> AsyncIterator[AsyncpgPool]:
    """A pool of one connection, so that the next statement shows what became of it."""
    pool = AsyncpgPool(postgres_url, max_size=1, session_settings={})
    yield pool
    await pool.close()


async def running(postgres_url: str, query: str) -> bool:
    """Whether a session on the test's database is executing ``query`` right now."""
    observer = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        return bool(
            await observer.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND state = 'active' AND query = $1",
                query,
            )
        )
    finally:
        await observer.close()


async def ended(postgres_url: str, pid: int) -> bool:
    """Whether the session ``pid`` is gone from the server."""
    observer = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        found = await observer.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)
    finally:
        await observer.close()
    return int(found) == 0


async def backend_pid(pool: AsyncpgPool) -> int:
    async with pool.connection() as connection:
        return int(await connection.fetchval("SELECT pg_backend_pid()"))


async def test_no_connection_is_opened_before_the_first_statement(postgres_url: str) -> None:
    """A process that never runs a hot statement holds no session on the server."""
    pool = AsyncpgPool(postgres_url, max_size=3, session_settings={})
    try:
        assert await backends(postgres_url) == 0
        await backend_pid(pool)
        assert await backends(postgres_url) == 1
    finally:
        await pool.close()
    assert await backends(postgres_url) == 0


async def test_it_opens_no_more_than_its_size_and_serves_every_waiter(postgres_url: str) -> None:
    pool = AsyncpgPool(postgres_url, max_size=3, session_settings={})
    running = 0
    most = 0

    async def statement() -> int:
        nonlocal running, most
        async with pool.connection() as connection:
            running += 1
            most = max(most, running)
            value = await connection.fetchval("SELECT pg_sleep(0.02)")
            running -= 1
        return 1 if value is None else 0

    try:
        results = await asyncio.gather(*(statement() for _ in range(20)))
        assert sum(results) == 20
        assert most == 3
        # The three connections stay open for the next statements; nothing else is open.
        assert await backends(postgres_url) == 3
    finally:
        await pool.close()


async def test_a_connection_is_reused_between_statements(postgres_url: str) -> None:
    pool = AsyncpgPool(postgres_url, max_size=5, session_settings={})
    try:
        assert len({await backend_pid(pool) for _ in range(10)}) == 1
    finally:
        await pool.close()


async def test_a_cancelled_statement_never_hands_its_connection_on(
    postgres_url: str, single: AsyncpgPool
) -> None:
    first = await backend_pid(single)

    async def slow() -> None:
        async with single.connection() as connection:
            await connection.fetchval("SELECT pg_sleep(5)")

    task = asyncio.create_task(slow())
    # Cancelled mid-statement: once the server is running it.
    await eventually(
        lambda: running(postgres_url, "SELECT pg_sleep(5)"), 5.0, "the slow statement runs"
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The only slot was freed, and the next statement gets a fresh, working connection.
    async with single.connection() as connection:
        assert await connection.fetchval("SELECT pg_backend_pid()") != first
        assert await connection.fetchval("SELECT 41 + 1") == 42


async def test_a_connection_whose_statement_failed_is_not_lent_again(single: AsyncpgPool) -> None:
    """A bug's error is raised as it is, and the connection is closed all the same."""
    first = await backend_pid(single)
    with pytest.raises(asyncpg.UndefinedTableError):
        async with single.connection() as connection:
            await connection.fetchval("SELECT * FROM no_such_table")
    async with single.connection() as connection:
        assert await connection.fetchval("SELECT pg_backend_pid()") != first
        assert await connection.fetchval("SELECT 41 + 1") == 42


async def test_a_connection_killed_while_idle_is_replaced_unnoticed(
    postgres_url: str, single: AsyncpgPool
) -> None:
    victim = await backend_pid(single)
    await terminate_backend(postgres_url, victim)
    await eventually(lambda: ended(postgres_url, victim), 5.0, "the session has ended")
    assert await backend_pid(single) != victim


async def test_a_connection_killed_in_use_is_an_outage_then_replaced(
    postgres_url: str, single: AsyncpgPool
) -> None:
    victims: list[int] = []

    async def statement_on_a_killed_connection() -> None:
        async with single.connection() as connection:
            victims.append(await connection.fetchval("SELECT pg_backend_pid()"))
            await terminate_backend(postgres_url, victims[0])
            await connection.fetchval("SELECT 1")

    with pytest.raises(DatabaseUnavailable):
        await statement_on_a_killed_connection()
    assert await backend_pid(single) != victims[0]


async def test_a_refused_connection_is_an_outage() -> None:
    pool = AsyncpgPool(REFUSED, max_size=2, session_settings={})
    try:
        for _ in range(3):  # the slot is given back each time
            with pytest.raises(DatabaseUnavailable):
                async with pool.connection():
                    pass
    finally:
        await pool.close()


async def test_waiting_for_a_busy_connection_is_bounded(postgres_url: str) -> None:
    single = AsyncpgPool(
        postgres_url, max_size=1, session_settings={}, timeouts=Timeouts(acquire=0.2)
    )
    try:
        await _wait_for_a_busy_connection(single)
    finally:
        await single.close()


async def _wait_for_a_busy_connection(single: AsyncpgPool) -> None:
    release = asyncio.Event()
    holding = asyncio.Event()

    async def holder() -> None:
        async with single.connection():
            holding.set()
            await release.wait()

    held = asyncio.create_task(holder())
    await holding.wait()
    with pytest.raises(DatabaseUnavailable):
        async with single.connection():
            pass
    release.set()
    await held
    # The holder gave its connection back: the pool serves again.
    await backend_pid(single)


async def test_a_statement_the_server_does_not_answer_in_time_is_an_outage(
    postgres_url: str,
) -> None:
    """A stalled server (here, a statement that takes too long) ends in a 503, not a hang."""
    pool = AsyncpgPool(
        postgres_url, max_size=1, session_settings={}, timeouts=Timeouts(statement=0.2)
    )
    try:
        with pytest.raises(DatabaseUnavailable):
            async with pool.connection() as connection:
                await connection.fetchval("SELECT pg_sleep(5)")
        assert await backend_pid(pool) > 0
    finally:
        await pool.close()


async def test_closing_waits_for_lent_connections_within_a_bound(
    single: AsyncpgPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection still lent when the bound runs out is cut off; its statement, the
    statements waiting for it and every statement after the close are outages."""
    monkeypatch.setattr(postgres, "CLOSE_SECONDS", 0.2)
    holding = asyncio.Event()

    async def holder() -> None:
        async with single.connection() as connection:
            holding.set()
            await connection.fetchval("SELECT pg_sleep(5)")

    held = asyncio.create_task(holder())
    await holding.wait()
    waiting = asyncio.create_task(backend_pid(single))
    await asyncio.sleep(0.05)
    async with asyncio.timeout(2):
        await single.close()
        for statement in (held, waiting):
            with pytest.raises(DatabaseUnavailable):
                await statement
    with pytest.raises(DatabaseUnavailable):
        await backend_pid(single)
