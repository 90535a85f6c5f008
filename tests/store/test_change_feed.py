"""The feed of grant changes on PostgreSQL (store.change_feed, migration 0004): what the
triggers announce, when the feed vouches for having heard it, and what a lost session does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import asyncpg
import pytest

from frontdesk.store import change_feed
from frontdesk.store.change_feed import CHANNEL, ChangeFeed
from frontdesk.store.database import Database
from frontdesk.store.postgres import driver_dsn
from tests.support.grant_changes import end_listening_sessions, listening_sessions, until

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sql(postgres_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A session of its own, as another instance or an operator would have."""
    connection = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        yield connection
    finally:
        await connection.close()


def feed_of(database: Database) -> tuple[ChangeFeed, list[str | None]]:
    feed = database.grant_changes
    assert feed is not None
    heard: list[str | None] = []
    feed.subscribe(heard.append)
    return feed, heard


async def test_a_notice_is_heard_when_its_transaction_commits(
    postgres_database: Database, sql: asyncpg.Connection
) -> None:
    feed, heard = feed_of(postgres_database)
    assert not feed.confirmed()
    feed.start()
    await until(feed.confirmed)
    heard.clear()

    async with sql.transaction():
        await sql.execute("SELECT pg_notify($1, 'a:one')", CHANNEL)
        await feed.caught_up()
        assert heard == []
        # Read before the commit: its notice may be handled before the commit's own answer.
        generation = feed.generation
    await feed.caught_up()
    assert heard == ["a:one"]
    assert feed.generation == generation + 1

    rolled_back = sql.transaction()
    await rolled_back.start()
    await sql.execute("SELECT pg_notify($1, 'a:two')", CHANNEL)
    await rolled_back.rollback()
    await feed.caught_up()
    assert heard == ["a:one"]


async def test_the_triggers_announce_every_change_that_ends_a_token(
    postgres_database: Database, sql: asyncpg.Connection
) -> None:
    feed, heard = feed_of(postgres_database)
    feed.start()
    await until(feed.confirmed)
    customer = await sql.fetchval(
        "INSERT INTO customers (tenant_key, subject, email, name, created_at, updated_at) "
        "VALUES ('initech', 'dev:p', 'p@initech.example', 'Peter', now(), now()) RETURNING id"
    )
    family = await sql.fetchval(
        "INSERT INTO token_families (tenant_key, client_id, customer_id, scope, code_hash, "
        "created_at) VALUES ('initech', 'client', $1, 'openid', 'code', now()) RETURNING id",
        customer,
    )
    await sql.execute(
        "INSERT INTO access_tokens (token_hash, family_id, expires_at, created_at) "
        "VALUES ('hash-1', $1, now() + interval '1 hour', now())",
        family,
    )
    await feed.caught_up()
    heard.clear()

    # A sign-in that changes nothing a tool sees is no change.
    await sql.execute("UPDATE customers SET updated_at = now()")
    await sql.execute("UPDATE customers SET name = 'Peter Gibbons'")
    await sql.execute("UPDATE access_tokens SET revoked_at = now()")
    await sql.execute("UPDATE token_families SET revoked_at = now()")
    await sql.execute("DELETE FROM access_tokens")
    await sql.execute("TRUNCATE token_families, customers CASCADE")
    await feed.caught_up()

    # PostgreSQL folds a transaction's identical notices into one: one "*" for the TRUNCATE.
    assert heard == [f"c:{customer}", "a:hash-1", f"f:{family}", "a:hash-1", "*"]


async def test_a_lost_session_is_trusted_no_more_and_starts_again(
    postgres_database: Database, sql: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(change_feed, "RECONNECT_SECONDS", 0.05)
    feed, heard = feed_of(postgres_database)
    # Whether the feed vouched for itself as each None was heard: the session may be back
    # before a poll would see the gap, so the gap is recorded as it happens.
    vouched_at_loss: list[bool] = []

    def note_loss(payload: str | None) -> None:
        if payload is None:
            vouched_at_loss.append(feed.confirmed())

    feed.subscribe(note_loss)
    feed.start()
    await until(feed.confirmed)
    heard.clear()
    vouched_at_loss.clear()
    generation = feed.generation

    assert await end_listening_sessions(sql) == 1
    # Whatever was sent while no session listened reached nobody: subscribers drop it all.
    await until(lambda: None in heard, seconds=1.0)
    assert vouched_at_loss
    assert not any(vouched_at_loss)
    assert feed.generation > generation

    await until(feed.confirmed)
    await sql.execute("SELECT pg_notify($1, 'a:after')", CHANNEL)
    await feed.caught_up()
    assert heard[-1] == "a:after"


async def test_a_silent_session_is_trusted_no_longer_than_the_bound(
    postgres_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session that stops answering without closing (a dropped route, a frozen server):
    the feed stops vouching once its last answered heartbeat is TRUST_SECONDS old."""
    feed, _heard = feed_of(postgres_database)
    feed.start()
    await until(feed.confirmed)
    answered_at = time.monotonic()
    # Every heartbeat from now on goes unanswered.
    silent = asyncio.Event()
    monkeypatch.setattr(asyncpg.Connection, "fetchval", lambda *_a, **_k: silent.wait())
    await until(lambda: not feed.confirmed(), seconds=2.0)
    assert time.monotonic() - answered_at <= change_feed.TRUST_SECONDS + 0.2
    # caught_up never waits past the bound either.
    started = time.monotonic()
    await feed.caught_up()
    assert time.monotonic() - started <= change_feed.TRUST_SECONDS + 0.2


async def test_nothing_listens_until_asked(
    postgres_database: Database, sql: asyncpg.Connection
) -> None:
    """A process that serves no signed-in call opens no session, and never waits."""
    feed, _heard = feed_of(postgres_database)
    await feed.caught_up()
    assert await listening_sessions(sql) == 0
    feed.start()
    await until(feed.confirmed)
    assert await listening_sessions(sql) == 1
