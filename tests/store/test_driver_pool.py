"""The asyncpg pool of the hot statements (store.postgres.DriverPool), on the real
PostgreSQL: bounded, fair to waiters, and never lending a connection left mid-statement."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from frontdesk.store.postgres import DatabaseUnavailable, DriverPool


async def backends(pool: DriverPool) -> int:
    async with pool.connection() as connection:
        count = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        )
    return int(count)


async def test_it_opens_no_more_than_its_size_and_serves_every_waiter(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=3, session_settings={})
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
        assert await backends(pool) == 3
    finally:
        await pool.close()


async def test_a_few_statements_at_once_wait_for_one_connection_rather_than_open_more(
    postgres_url: str,
) -> None:
    pool = DriverPool(postgres_url, max_size=10, session_settings={})

    async def statement() -> int:
        async with pool.connection() as connection:
            return int(await connection.fetchval("SELECT pg_backend_pid()"))

    try:
        pids = await asyncio.gather(
            *(statement() for _ in range(DriverPool.WAITERS_BEFORE_GROWING))
        )
        assert len(set(pids)) == 1
        assert await backends(pool) == 1
    finally:
        await pool.close()


async def test_a_connection_is_reused_between_statements(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=5, session_settings={})
    try:
        pids = set()
        for _ in range(10):
            async with pool.connection() as connection:
                pids.add(await connection.fetchval("SELECT pg_backend_pid()"))
        assert len(pids) == 1
    finally:
        await pool.close()


async def test_a_cancelled_statement_never_hands_its_connection_on(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=1, session_settings={})
    try:
        async with pool.connection() as connection:
            first = await connection.fetchval("SELECT pg_backend_pid()")

        async def slow() -> None:
            async with pool.connection() as connection:
                await connection.fetchval("SELECT pg_sleep(5)")

        task = asyncio.create_task(slow())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The only slot was freed, and the next statement gets a fresh, working connection.
        async with pool.connection() as connection:
            second = await connection.fetchval("SELECT pg_backend_pid()")
            assert await connection.fetchval("SELECT 41 + 1") == 42
        assert second != first
    finally:
        await pool.close()


async def test_a_connection_whose_statement_failed_is_not_lent_again(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=1, session_settings={})
    try:
        async with pool.connection() as connection:
            first = await connection.fetchval("SELECT pg_backend_pid()")
        with pytest.raises(asyncpg.UndefinedTableError):
            async with pool.connection() as connection:
                await connection.fetchval("SELECT * FROM no_such_table")
        async with pool.connection() as connection:
            assert await connection.fetchval("SELECT pg_backend_pid()") != first
            assert await connection.fetchval("SELECT 41 + 1") == 42
    finally:
        await pool.close()


async def terminate_backend(postgres_url: str, pid: int) -> None:
    killer = await asyncpg.connect(postgres_url.replace("postgresql+asyncpg", "postgresql"))
    try:
        await killer.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await killer.close()


async def test_a_connection_killed_while_idle_is_replaced_unnoticed(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=1, session_settings={})
    try:
        async with pool.connection() as connection:
            victim = await connection.fetchval("SELECT pg_backend_pid()")
        await terminate_backend(postgres_url, victim)
        await asyncio.sleep(0.1)
        async with pool.connection() as connection:
            assert await connection.fetchval("SELECT pg_backend_pid()") != victim
    finally:
        await pool.close()


async def test_a_connection_killed_in_use_is_an_outage_then_replaced(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=1, session_settings={})
    victims: list[int] = []

    async def statement_on_a_killed_connection() -> None:
        async with pool.connection() as connection:
            victims.append(await connection.fetchval("SELECT pg_backend_pid()"))
            await terminate_backend(postgres_url, victims[0])
            await connection.fetchval("SELECT 1")

    try:
        with pytest.raises(DatabaseUnavailable):
            await statement_on_a_killed_connection()
        async with pool.connection() as connection:
            assert await connection.fetchval("SELECT pg_backend_pid()") != victims[0]
    finally:
        await pool.close()


async def test_a_refused_connection_is_an_outage() -> None:
    refused = "postgresql+asyncpg://postgres@127.0.0.1:1/none"
    pool = DriverPool(refused, max_size=2, session_settings={})
    try:
        for _ in range(3):  # the slot is given back each time
            with pytest.raises(DatabaseUnavailable):
                async with pool.connection():
                    pass
    finally:
        await pool.close()


async def test_waiters_are_woken_with_an_outage_when_the_pool_closes(postgres_url: str) -> None:
    pool = DriverPool(postgres_url, max_size=1, session_settings={})
    holding = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with pool.connection():
            holding.set()
            await release.wait()

    async def waiter() -> None:
        async with pool.connection():
            pass

    held = asyncio.create_task(holder())
    await holding.wait()
    waiting = asyncio.create_task(waiter())
    await asyncio.sleep(0.05)
    await pool.close()
    with pytest.raises(DatabaseUnavailable):
        await waiting
    release.set()
    await held
