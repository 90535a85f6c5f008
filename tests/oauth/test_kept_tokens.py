"""Live access tokens kept in memory on PostgreSQL (store.access_lookups): answered without
a statement while the feed of grant changes vouches for them, and never after a
revocation, an expiry or a lost feed. Two apps on one database stand for two instances."""

from __future__ import annotations

import asyncio
import time
import types

import asyncpg
import pytest

from frontdesk.app import Frontdesk
from frontdesk.store import access_lookups, change_feed
from frontdesk.store.change_feed import ChangeFeed
from frontdesk.store.postgres import driver_dsn
from tests.oauth import flows
from tests.oauth.conftest import Serve, Served
from tests.support.grant_changes import end_listening_sessions, until

pytestmark = pytest.mark.anyio


@pytest.fixture
async def instances(serve: Serve, postgres_url: str) -> tuple[Served, Served]:
    first = await serve(database_url=postgres_url)
    second = await serve(database_url=postgres_url)
    return first, second


def feed_of(app: Frontdesk) -> ChangeFeed:
    feed = app.services.database.grant_changes
    assert feed is not None
    return feed


async def kept(app: Frontdesk, token: str, subject: str = "dev:peter@initech.example") -> None:
    """Look the token up until the feed vouches, then once more, which keeps it."""
    grants = app.services.grants
    bearer = await grants.bearer("initech", token)
    assert bearer is not None
    assert bearer.customer.subject == subject
    await until(feed_of(app).confirmed)
    assert await grants.bearer("initech", token) is not None


async def test_a_kept_token_is_answered_without_a_statement(
    instances: tuple[Served, Served], lookup_statements: list[int]
) -> None:
    served, _other = instances
    tokens = await flows.obtain_tokens(served.client)
    await kept(served.app, tokens.access)
    made = len(lookup_statements)

    result = await flows.whoami_result(served.client, tokens.access)

    assert result["subject"] == "dev:peter@initech.example"
    assert len(lookup_statements) == made
    # Another company's token is no token there, from memory too.
    assert await served.app.services.grants.bearer("hooli", tokens.access) is None
    assert len(lookup_statements) == made


async def test_a_revocation_here_takes_effect_before_it_is_answered(
    instances: tuple[Served, Served],
) -> None:
    served, _other = instances
    tokens = await flows.obtain_tokens(served.client)
    await kept(served.app, tokens.access)

    revoked = await flows.revoke(served.client, tokens.access, tokens.client_id)

    assert revoked.status_code == 200
    assert (await flows.whoami(served.client, tokens.access)).status_code == 401


async def test_a_revocation_at_another_instance_ends_the_kept_token(
    instances: tuple[Served, Served],
) -> None:
    first, second = instances
    tokens = await flows.obtain_tokens(first.client)
    await kept(second.app, tokens.access)

    revoked = await flows.revoke(first.client, tokens.access, tokens.client_id)
    assert revoked.status_code == 200

    # The notice is delivered as the revocation commits: no waiting for a timer.
    started = time.monotonic()
    while await second.app.services.grants.bearer("initech", tokens.access) is not None:
        assert time.monotonic() - started < change_feed.TRUST_SECONDS
        await asyncio.sleep(0.001)
    assert (await flows.whoami(second.client, tokens.access)).status_code == 401


async def test_a_family_ended_elsewhere_ends_its_kept_tokens(
    instances: tuple[Served, Served],
) -> None:
    """Refresh-token reuse at one instance ends the family's access token at the other."""
    first, second = instances
    tokens = await flows.obtain_tokens(first.client)
    await kept(second.app, tokens.access)
    newest = flows.tokens_of(await flows.refresh(first.client, tokens), tokens.client_id)
    # Its new pair in use, the spent token sent again is reuse, not a retry.
    assert (await flows.whoami(first.client, newest.access)).status_code == 200

    reused = await flows.refresh(first.client, tokens)

    assert reused.status_code == 400
    await feed_of(second.app).caught_up()
    assert (await flows.whoami(second.client, tokens.access)).status_code == 401


async def test_a_customer_changed_elsewhere_is_seen_at_once(
    instances: tuple[Served, Served],
) -> None:
    first, second = instances
    tokens = await flows.obtain_tokens(first.client)
    await kept(second.app, tokens.access)
    # Signing in again with a new name updates the customer's row, at the first instance.
    await flows.obtain_tokens(first.client, name="Peter G.")

    await feed_of(second.app).caught_up()

    assert (await flows.whoami_result(second.client, tokens.access))["name"] == "Peter G."


async def test_without_the_feed_every_call_asks_the_database(
    instances: tuple[Served, Served],
    postgres_url: str,
    lookup_statements: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The listening session is cut and the revocation's notice reaches nobody: the kept
    token is not trusted, and the database says it is revoked."""
    monkeypatch.setattr(change_feed, "RECONNECT_SECONDS", 60.0)
    served, _other = instances
    tokens = await flows.obtain_tokens(served.client)
    await kept(served.app, tokens.access)
    sql = await asyncpg.connect(driver_dsn(postgres_url))
    try:
        assert await end_listening_sessions(sql) == 1
        await until(lambda: not feed_of(served.app).confirmed(), seconds=1.0)
        await sql.execute("UPDATE access_tokens SET revoked_at = now()")
    finally:
        await sql.close()
    made = len(lookup_statements)

    assert (await flows.whoami(served.client, tokens.access)).status_code == 401
    assert len(lookup_statements) == made + 1


async def test_a_kept_token_expires_on_time(
    instances: tuple[Served, Served], lookup_statements: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, _other = instances
    tokens = await flows.obtain_tokens(served.client)
    await kept(served.app, tokens.access)
    made = len(lookup_statements)
    # Two hours on, by the clock the kept rows are compared with.
    later = time.time() + 7200
    monkeypatch.setattr(access_lookups, "time", types.SimpleNamespace(time=lambda: later))

    await served.app.services.grants.bearer("initech", tokens.access)

    # Not answered from memory: the database decides (by its own, real clock).
    assert len(lookup_statements) == made + 1
