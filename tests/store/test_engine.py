"""The store's async engine over SQLAlchemy's own, on both backends' async drivers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select, text
from sqlalchemy.engine import Connection

from frontdesk.store.engine import AsyncEngine, create_async_engine

metadata = MetaData()
notes = Table(
    "engine_notes", metadata, Column("id", Integer, primary_key=True), Column("text", String)
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(database_url)
    async with engine.begin() as connection:
        await connection.run_sync(metadata.create_all)
    yield engine
    async with engine.begin() as connection:
        await connection.run_sync(metadata.drop_all)
    await engine.dispose()


async def stored(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as connection:
        rows = (await connection.execute(select(notes.c.text).order_by(notes.c.id))).all()
    return [note for (note,) in rows]


async def test_a_transaction_that_ends_normally_is_committed(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(insert(notes).values(text="kept"))
    assert await stored(engine) == ["kept"]


async def test_a_transaction_that_raises_is_rolled_back(engine: AsyncEngine) -> None:
    async def insert_then_fail() -> None:
        async with engine.begin() as connection:
            await connection.execute(insert(notes).values(text="lost"))
            raise LookupError

    with pytest.raises(LookupError):
        await insert_then_fail()
    assert await stored(engine) == []


async def test_a_connection_rolls_back_what_it_did_not_commit(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        await connection.execute(insert(notes).values(text="uncommitted"))
    async with engine.connect() as connection:
        await connection.execute(insert(notes).values(text="committed"))
        await connection.commit()
    assert await stored(engine) == ["committed"]


async def test_results_are_typed_rows_and_run_sync_gets_the_sync_connection(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await connection.execute(insert(notes), [{"text": "a"}, {"text": "b"}])
        count = await connection.run_sync(
            lambda sync, table: sync.execute(select(table.c.id)).all(), notes
        )
        assert len(count) == 2
        row = (await connection.execute(text("SELECT 1 + 1"))).one()
        assert row[0] == 2
        assert isinstance(connection.sync_connection, Connection)


async def test_execution_options_give_the_same_pool_new_options(engine: AsyncEngine) -> None:
    reads = engine.execution_options(isolation_level="AUTOCOMMIT")
    assert reads.sync_engine.pool is engine.sync_engine.pool
    assert reads.dialect is engine.dialect
    async with reads.connect() as connection:
        await connection.execute(insert(notes).values(text="autocommitted"))
    assert await stored(engine) == ["autocommitted"]


def test_only_async_drivers_are_accepted() -> None:
    with pytest.raises(ValueError, match="not an asyncio driver"):
        create_async_engine("sqlite://")
