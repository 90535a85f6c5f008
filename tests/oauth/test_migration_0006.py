"""Migration 0006 on a database already in use: customers recorded before it are unverified,
spent flows get their table, and it goes down again with the customers still referenced."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from frontdesk.store.database import Database
from tests.store.test_migration_0005 import migration_to


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """This module's tests begin where a deployment does: a database without any schema
    (not a copy of the session's migrated template)."""
    return empty_database_url


@pytest.fixture
async def at_0005(database_url: str) -> AsyncIterator[Database]:
    """A database at revision 0005 holding a customer that a token family references."""
    database = Database(database_url)
    try:
        async with database.engine.begin() as connection:
            await connection.run_sync(migration_to("0005"))
            now = datetime.now(UTC)
            await connection.execute(
                text(
                    "INSERT INTO customers (id, tenant_key, subject, email, name, created_at, "
                    "updated_at) VALUES (1, 'initech', 'dev:p', 'p@initech.example', 'Peter', "
                    ":now, :now)"
                ),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO token_families (tenant_key, client_id, customer_id, scope, "
                    "code_hash, created_at) VALUES ('initech', 'fdc_x', 1, 'email', 'code', :now)"
                ),
                {"now": now},
            )
        yield database
    finally:
        await database.close()


def columns_of(connection: Connection, table: str) -> set[str]:
    return {column["name"] for column in inspect(connection).get_columns(table)}


def tables_of(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


async def test_0006_up_and_down_keeps_the_customers(at_0005: Database) -> None:
    """Up: the customer is unverified and spent_flows exists. Down: the column and the
    table go, the customer and the family that references it stay. Up again works."""
    engine = at_0005.engine
    async with engine.begin() as connection:
        await connection.run_sync(migration_to("0006"))
        verified = (
            await connection.execute(text("SELECT email_verified FROM customers"))
        ).scalar_one()
        assert verified in (False, 0)
        assert "spent_flows" in await connection.run_sync(tables_of)
    async with engine.begin() as connection:
        await connection.run_sync(migration_to("0005", down=True))
        assert "email_verified" not in await connection.run_sync(columns_of, "customers")
        assert "spent_flows" not in await connection.run_sync(tables_of)
        families = (await connection.execute(text("SELECT count(*) FROM token_families"))).scalar()
        customer = (await connection.execute(text("SELECT email FROM customers"))).scalar()
        assert (families, customer) == (1, "p@initech.example")
    async with engine.begin() as connection:
        await connection.run_sync(migration_to("0006"))
        assert "email_verified" in await connection.run_sync(columns_of, "customers")
