"""The repositories' engine (store.database): SQLAlchemy's asyncio engine, and its
reads without a transaction around each statement."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.database import create_engine, for_reads

metadata = MetaData()
notes = Table(
    "engine_notes", metadata, Column("id", Integer, primary_key=True), Column("text", String)
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
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


async def test_reads_share_the_pool_and_commit_each_statement(engine: AsyncEngine) -> None:
    """No BEGIN and ROLLBACK around a read: what a statement writes there is committed."""
    reads = for_reads(engine)
    assert reads.sync_engine.pool is engine.sync_engine.pool
    async with reads.connect() as connection:
        await connection.execute(insert(notes).values(text="autocommitted"))
    assert await stored(engine) == ["autocommitted"]


async def test_a_transaction_that_raises_is_rolled_back(engine: AsyncEngine) -> None:
    async def insert_then_fail() -> None:
        async with engine.begin() as connection:
            await connection.execute(insert(notes).values(text="lost"))
            raise LookupError

    with pytest.raises(LookupError):
        await insert_then_fail()
    assert await stored(engine) == []
