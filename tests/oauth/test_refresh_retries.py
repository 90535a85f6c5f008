"""Refresh retries (oauth.refresh): a spent refresh token sent again while the pair it
produced has never been used, within the grace window counted from its rotation, gets a
fresh pair and the unused pair is revoked; any other second use revokes the family
(RFC 9700 4.14.2). On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import update

from frontdesk.app import Frontdesk
from frontdesk.oauth.credentials import digest
from frontdesk.store.audit import AuditLog
from frontdesk.store.tables import refresh_tokens
from tests.oauth import flows
from tests.oauth.conftest import Serve, Served

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]


def assert_refused(response: httpx.Response, error: str = "invalid_grant") -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"] == error


async def events_of(app: Frontdesk) -> list[str]:
    """The company's audit events, oldest first."""
    found = await AuditLog(app.services.database.engine).list("initech")
    return [event.event for event in reversed(found)]


async def lost_answer(client: httpx.AsyncClient, tokens: flows.Tokens) -> flows.Tokens:
    """A refresh whose answer the client never read: the pair it issued, for the test to
    check, which the client does not hold."""
    return flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)


async def rotated_long_ago(app: Frontdesk, refresh_token: str, seconds: float) -> None:
    """Move the first rotation of ``refresh_token`` ``seconds`` into the past."""
    async with app.services.database.engine.begin() as connection:
        await connection.execute(
            update(refresh_tokens)
            .where(refresh_tokens.c.token_hash == digest(refresh_token))
            .values(used_at=datetime.now(UTC) - timedelta(seconds=seconds))
        )


async def test_a_lost_answer_is_retried_with_a_fresh_pair(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """The same refresh token again, its pair unused: a new pair that works, the unused pair
    refused, the customer still signed in, and the retry in the audit log."""
    tokens = await flows.obtain_tokens(client, scope="email")
    lost = await lost_answer(client, tokens)

    retried = await flows.refresh(client, tokens)

    assert retried.status_code == 200, retried.text
    fresh = flows.tokens_of(retried, tokens.client_id)
    assert fresh.scope == "email"
    assert {fresh.access, fresh.refresh}.isdisjoint({lost.access, lost.refresh})
    assert (await flows.whoami(client, lost.access)).status_code == 401
    assert (await flows.whoami_result(client, fresh.access))["email"] is not None
    assert (await flows.refresh(client, fresh)).status_code == 200
    events = await events_of(app)
    assert events.count("refresh_retried") == 1
    assert "family_revoked" not in events


async def test_a_client_may_retry_more_than_once_within_the_window(
    client: httpx.AsyncClient,
) -> None:
    """A retry whose answer was lost too is retried again: each supersedes the last."""
    tokens = await flows.obtain_tokens(client)
    first_lost = await lost_answer(client, tokens)
    second_lost = await lost_answer(client, tokens)

    fresh = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)

    for lost in (first_lost, second_lost):
        assert (await flows.whoami(client, lost.access)).status_code == 401
    assert (await flows.whoami(client, fresh.access)).status_code == 200


async def test_the_superseded_refresh_token_presented_later_is_reuse(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """The refresh token of the pair a retry revoked is spent: presenting it ends the family,
    the retried pair with it."""
    tokens = await flows.obtain_tokens(client)
    lost = await lost_answer(client, tokens)
    fresh = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)

    assert_refused(await flows.refresh(client, lost))

    assert (await flows.whoami(client, fresh.access)).status_code == 401
    assert_refused(await flows.refresh(client, fresh))
    assert (await events_of(app))[-2:] == ["refresh_reuse_detected", "family_revoked"]


async def test_a_retry_after_the_new_access_token_was_used_is_reuse(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Once the new access token has been presented at the MCP endpoint, the old refresh
    token again is reuse: the family is revoked."""
    tokens = await flows.obtain_tokens(client)
    newest = await lost_answer(client, tokens)
    assert (await flows.whoami(client, newest.access)).status_code == 200

    assert_refused(await flows.refresh(client, tokens))

    assert (await flows.whoami(client, newest.access)).status_code == 401
    assert "refresh_retried" not in await events_of(app)


async def test_a_retry_after_the_new_refresh_token_was_spent_is_reuse(
    client: httpx.AsyncClient,
) -> None:
    """Once the new refresh token has been spent, the old one again is reuse."""
    tokens = await flows.obtain_tokens(client)
    newer = await lost_answer(client, tokens)
    newest = flows.tokens_of(await flows.refresh(client, newer), tokens.client_id)

    assert_refused(await flows.refresh(client, tokens))

    assert (await flows.whoami(client, newest.access)).status_code == 401


async def test_a_retry_after_the_window_is_reuse(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """Past the window since the rotation, an unused pair does not save the family."""
    tokens = await flows.obtain_tokens(client)
    newest = await lost_answer(client, tokens)
    await rotated_long_ago(app, tokens.refresh, app.services.settings.refresh_retry_seconds)

    assert_refused(await flows.refresh(client, tokens))

    assert (await flows.whoami(client, newest.access)).status_code == 401


async def test_the_window_does_not_slide_with_retries(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A retry leaves the window where the first rotation opened it: once that has passed,
    the token again is reuse, however recent the retry."""
    tokens = await flows.obtain_tokens(client)
    await lost_answer(client, tokens)
    await rotated_long_ago(app, tokens.refresh, app.services.settings.refresh_retry_seconds - 5)
    retried = await lost_answer(client, tokens)
    await rotated_long_ago(app, tokens.refresh, app.services.settings.refresh_retry_seconds)

    assert_refused(await flows.refresh(client, tokens))

    assert (await flows.whoami(client, retried.access)).status_code == 401


async def test_with_retries_off_a_second_use_is_reuse(serve: Serve, database_url: str) -> None:
    """FRONTDESK_REFRESH_RETRY_SECONDS=0: the same refresh token twice revokes the family,
    its new pair unused or not."""
    served: Served = await serve(database_url=database_url, refresh_retry_seconds=0)
    tokens = await flows.obtain_tokens(served.client)
    newest = await lost_answer(served.client, tokens)

    assert_refused(await flows.refresh(served.client, tokens))

    assert (await flows.whoami(served.client, newest.access)).status_code == 401
    assert (await events_of(served.app))[-2:] == ["refresh_reuse_detected", "family_revoked"]


async def test_concurrent_retries_leave_exactly_one_live_pair(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Two retries at once: one pair stands, every other pair handed out is revoked, and
    the family (the customer's sign-in) lives on."""
    tokens = await flows.obtain_tokens(client)
    lost = await lost_answer(client, tokens)

    responses = await asyncio.gather(*(flows.refresh(client, tokens) for _ in range(2)))

    issued = [
        flows.tokens_of(response, tokens.client_id)
        for response in responses
        if response.status_code == 200
    ]
    for response in responses:
        if response.status_code != 200:
            assert_refused(response)
    assert issued
    accepted = [
        pair
        for pair in [lost, *issued]
        if (await flows.whoami(client, pair.access)).status_code == 200
    ]
    assert len(accepted) == 1
    assert (await flows.refresh(client, accepted[0])).status_code == 200
    events = await events_of(app)
    assert events.count("refresh_retried") == len(issued)
    assert "family_revoked" not in events


async def test_a_retry_cannot_widen_the_scope(client: httpx.AsyncClient) -> None:
    """A retry asking for more than was granted: invalid_scope, and the unused pair stands."""
    tokens = await flows.obtain_tokens(client, scope="email")
    lost = await lost_answer(client, tokens)

    assert_refused(await flows.refresh(client, tokens, scope="profile"), "invalid_scope")

    assert (await flows.whoami(client, lost.access)).status_code == 200
