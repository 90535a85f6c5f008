"""The hot statements are written once in SQLAlchemy Core (store.hot_statements): what the
raw drivers run is that statement, compiled, and the engine runs the same one.

Each text is compiled again here from the Core statement and looked for where it ran: in
PostgreSQL's prepared statements of the asyncpg pools, in what the SQLite reader's
connection executed, in what the engine sent.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from frontdesk.app import Frontdesk
from frontdesk.store import hot_statements
from frontdesk.store.hot_statements import compiled
from frontdesk.store.postgres import AsyncpgPool
from tests.oauth import flows

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

ASYNCPG = "postgresql+asyncpg"


async def prepared_on(pool: AsyncpgPool | None) -> list[str]:
    """The statements PostgreSQL holds prepared for the pool's connection. The pool opens
    connections only as statements need them, and the steps before ran one at a time, so
    it holds one: the one that ran them."""
    assert pool is not None
    async with pool.connection() as connection:
        rows = await connection.fetch("SELECT statement FROM pg_prepared_statements")
    return [row[0] for row in rows]


def executed_by(app: Frontdesk) -> list[str]:
    """Every statement the engine sends from now on."""
    sent: list[str] = []

    def record(*cursor_execute: Any) -> None:
        sent.append(cursor_execute[2])

    event.listen(app.services.database.engine.sync_engine, "before_cursor_execute", record)
    return sent


async def test_the_signed_in_lookup_runs_the_compiled_statement(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    tokens = await flows.obtain_tokens(client)
    database = app.services.database
    reader = database.access_reader
    if reader is None:
        await flows.whoami_result(client, tokens.access)
        expected = compiled(hot_statements.FIND_LIVE_ACCESS_TOKENS, ASYNCPG).text
        assert expected in await prepared_on(database.lookup_pool)
        return
    # The first call marks the token used, through the engine.
    sent = executed_by(app)
    await flows.whoami_result(client, tokens.access)
    dialect = database.engine.dialect
    assert str(hot_statements.MARK_ACCESS_USED.compile(dialect=dialect)) in sent
    ran: list[str] = []
    # The reader's own connection (opened by the call above): what it executes.
    connection: sqlite3.Connection | None = reader._connection
    assert connection is not None
    connection.set_trace_callback(ran.append)
    await flows.whoami_result(client, tokens.access)
    connection.set_trace_callback(None)
    # sqlite3 traces a statement with its values in place of its parameters.
    text = compiled(hot_statements.FIND_LIVE_ACCESS_GRANT, "sqlite").text
    assert text.count("?") == 3
    with_values = re.escape(text).replace(r"\?", "'[^']*'")
    assert len(ran) == 1
    assert re.fullmatch(with_values, ran[0]), ran


async def test_a_refresh_grant_runs_the_compiled_statements(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    tokens = await flows.obtain_tokens(client)
    database = app.services.database
    sent = executed_by(app)
    assert (await flows.refresh(client, tokens)).status_code == 200
    if database.access_reader is None:
        prepared = await prepared_on(database.driver_pool)
        assert compiled(hot_statements.FIND_REFRESH, ASYNCPG).text in prepared
        assert compiled(hot_statements.ROTATE_REFRESH, ASYNCPG).text in prepared
        return
    dialect = database.engine.dialect
    assert str(hot_statements.FIND_REFRESH.compile(dialect=dialect)) in sent
    assert str(hot_statements.SPEND_REFRESH.compile(dialect=dialect)) in sent
