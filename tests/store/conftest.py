"""Fixtures for the store tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from frontdesk.store.database import Database


async def migrated(url: str) -> AsyncIterator[Database]:
    """A Database at the newest schema, closed after the test."""
    database = Database(url)
    await database.migrate()
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """On each backend, migrated."""
    async for database in migrated(database_url):
        yield database


@pytest.fixture
async def postgres_database(postgres_url: str) -> AsyncIterator[Database]:
    async for database in migrated(postgres_url):
        yield database
