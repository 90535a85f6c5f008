"""Which grant store serves a database: the SQLite one with its synchronous lookup, the
PostgreSQL one with its own pools and change feed, or the plain SQLAlchemy one."""

from __future__ import annotations

from frontdesk.store.database import Database
from frontdesk.store.grants import GrantRepository


def grant_repository(database: Database) -> GrantRepository:
    if database.access_reader is not None:
        from frontdesk.store.grants_sqlite import SqliteGrantRepository

        return SqliteGrantRepository(database.engine, database.access_reader)
    driver_pool, lookup_pool = database.driver_pool, database.lookup_pool
    if driver_pool is None or lookup_pool is None or database.grant_changes is None:
        return GrantRepository(database.engine)
    # Imported here: asyncpg is only loaded where PostgreSQL is used.
    from frontdesk.store.grants_postgres import PostgresGrantRepository

    return PostgresGrantRepository(
        database.engine, driver_pool, lookup_pool, database.grant_changes
    )
