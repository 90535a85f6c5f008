"""A refresh token works once (interface 3.2): presented again it is invalid_grant and ends its
family (RFC 9700 4.14.2). A company may choose a retry window instead (oauth.refresh): a
spent token sent again within it, while the refresh token of the pair its rotation produced
is unspent, gets that same pair again, and nothing new is issued. On SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from frontdesk.app import Frontdesk
from frontdesk.oauth.credentials import digest
from frontdesk.store.audit import AuditLog
from frontdesk.store.tables import access_tokens, refresh_tokens
from tests.oauth import flows
from tests.oauth.retry_window import (
    TENANT,
    WINDOW_SECONDS,
    add_retrying_company,
    rotated_long_ago,
)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]


def assert_refused(response: httpx.Response, error: str = "invalid_grant") -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"] == error


async def events_of(app: Frontdesk, tenant: str = TENANT) -> list[str]:
    """The company's audit events, oldest first."""
    found = await AuditLog(app.services.database.engine).list(tenant)
    return [event.event for event in reversed(found)]


async def pairs_issued(app: Frontdesk) -> int:
    async with app.services.database.engine.connect() as connection:
        return int(
            (await connection.execute(select(func.count()).select_from(access_tokens))).scalar_one()
        )


async def kept_pairs(app: Frontdesk) -> list[str]:
    """The sealed pairs the store holds."""
    async with app.services.database.engine.connect() as connection:
        found = await connection.execute(
            select(refresh_tokens.c.successor_sealed).where(
                refresh_tokens.c.successor_sealed.is_not(None)
            )
        )
        return [str(sealed) for sealed in found.scalars()]


async def assert_family_ended(client: httpx.AsyncClient, *pairs: flows.Tokens) -> None:
    for pair in pairs:
        assert (await flows.whoami(client, pair.access, pair.tenant)).status_code == 401
        assert_refused(await flows.refresh(client, pair))


@pytest.fixture
async def retrying(app: Frontdesk, tmp_path: Path) -> None:
    await add_retrying_company(app, tmp_path)


# The contract's rule: every company that chose no window ---------------------------------


async def test_a_spent_refresh_token_presented_again_ends_the_family(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Refreshed once (the client may never have read the answer), then the same token
    again at once: invalid_grant, and every token of the family is dead, the pair nobody
    used included; no pair was kept."""
    tokens = await flows.obtain_tokens(client)
    newest = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)

    assert_refused(await flows.refresh(client, tokens))

    await assert_family_ended(client, newest)
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    assert (await events_of(app, flows.TENANT))[-2:] == ["refresh_reuse_detected", "family_revoked"]
    assert await kept_pairs(app) == []


# A company's retry window -----------------------------------------------------------------


@pytest.mark.usefixtures("retrying")
async def test_a_retry_within_the_window_gets_the_same_pair(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """The answer lost, the same refresh token again: the identical pair, scope and all, no
    new pair issued; it works, and refreshes on; the retry is in the audit log."""
    tokens = await flows.obtain_tokens(client, TENANT, scope="email")
    first = await flows.refresh(client, tokens)
    issued = await pairs_issued(app)

    again = await flows.refresh(client, tokens)

    assert again.status_code == 200, again.text
    lost, retried = first.json(), again.json()
    assert {key: retried[key] for key in ("access_token", "refresh_token", "scope")} == {
        key: lost[key] for key in ("access_token", "refresh_token", "scope")
    }
    assert retried["token_type"] == "Bearer"
    assert 0 < retried["expires_in"] <= lost["expires_in"]
    assert await pairs_issued(app) == issued
    pair = flows.tokens_of(again, tokens.client_id, TENANT)
    assert (await flows.whoami_result(client, pair.access, TENANT))["email"] is not None
    assert (await flows.refresh(client, pair)).status_code == 200
    events = await events_of(app)
    assert events.count("refresh_retried") == 1
    assert "family_revoked" not in events


@pytest.mark.usefixtures("retrying")
async def test_two_refreshes_at_once_get_one_pair_and_the_grant_lives_on(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Two refreshes of one token sent at the same moment: both 200 with the same pair, one
    pair issued, and the next refresh with it works."""
    tokens = await flows.obtain_tokens(client, TENANT)
    issued = await pairs_issued(app)

    responses = await asyncio.gather(*(flows.refresh(client, tokens) for _ in range(2)))

    assert [response.status_code for response in responses] == [200, 200], [
        response.text for response in responses
    ]
    pairs = {flows.tokens_of(response, tokens.client_id, TENANT) for response in responses}
    assert len(pairs) == 1
    assert await pairs_issued(app) == issued + 1
    (pair,) = pairs
    assert (await flows.whoami(client, pair.access, TENANT)).status_code == 200
    assert (await flows.refresh(client, pair)).status_code == 200
    assert "family_revoked" not in await events_of(app)


@pytest.mark.usefixtures("retrying")
async def test_a_retry_after_the_new_access_token_was_used_still_gets_the_pair(
    client: httpx.AsyncClient,
) -> None:
    """Using the access token does not spend the pair: a retry still gets it (one live pair
    either way), where before any use of it made the retry reuse."""
    tokens = await flows.obtain_tokens(client, TENANT)
    newest = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id, TENANT)
    assert (await flows.whoami(client, newest.access, TENANT)).status_code == 200

    again = await flows.refresh(client, tokens)

    assert flows.tokens_of(again, tokens.client_id, TENANT) == newest


@pytest.mark.usefixtures("retrying")
async def test_a_retry_after_the_new_refresh_token_was_spent_is_reuse(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Once the successor refresh token is spent, the old one again ends the family, and
    the pairs kept for retries go with it."""
    tokens = await flows.obtain_tokens(client, TENANT)
    newer = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id, TENANT)
    newest = flows.tokens_of(await flows.refresh(client, newer), tokens.client_id, TENANT)
    assert await kept_pairs(app)

    assert_refused(await flows.refresh(client, tokens))

    await assert_family_ended(client, newest)
    assert (await events_of(app))[-2:] == ["refresh_reuse_detected", "family_revoked"]
    assert await kept_pairs(app) == []


@pytest.mark.usefixtures("retrying")
async def test_a_retry_after_the_window_is_reuse(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """Past the window since the rotation, the same token again ends the family."""
    tokens = await flows.obtain_tokens(client, TENANT)
    newest = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id, TENANT)
    await rotated_long_ago(app, tokens.refresh, WINDOW_SECONDS)

    assert_refused(await flows.refresh(client, tokens))

    await assert_family_ended(client, newest)


@pytest.mark.usefixtures("retrying")
async def test_a_retry_cannot_widen_the_scope(client: httpx.AsyncClient) -> None:
    """A retry asking for more than was granted: invalid_scope, and the pair stands."""
    tokens = await flows.obtain_tokens(client, TENANT, scope="email")
    newest = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id, TENANT)

    assert_refused(await flows.refresh(client, tokens, scope="profile"), "invalid_scope")

    assert (await flows.whoami(client, newest.access, TENANT)).status_code == 200
    assert (await flows.refresh(client, newest)).status_code == 200


@pytest.mark.usefixtures("retrying")
async def test_a_kept_pair_opens_only_on_its_own_row(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A sealed pair copied onto another spent token does not open there (its associated
    data names the token): that token's retry is reuse, not another customer's pair."""
    mine = await flows.obtain_tokens(client, TENANT)
    theirs = await flows.obtain_tokens(client, TENANT, client_id=mine.client_id)
    await flows.refresh(client, mine)
    await flows.refresh(client, theirs)
    table = refresh_tokens.c
    async with app.services.database.engine.begin() as connection:
        sealed = (
            await connection.execute(
                select(table.successor_sealed).where(table.token_hash == digest(theirs.refresh))
            )
        ).scalar_one()
        await connection.execute(
            refresh_tokens.update()
            .where(table.token_hash == digest(mine.refresh))
            .values(successor_sealed=sealed)
        )

    assert_refused(await flows.refresh(client, mine))
