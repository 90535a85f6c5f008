"""The refresh-token grant: single use, rotation, and reuse detection (interface 3.2, 8;
DESIGN: a used refresh token revokes its family, RFC 9700 4.14). A company may choose a
retry window instead (tests/oauth/test_refresh_retries.py); the test companies here keep
the contract's rule."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.store.tables import refresh_tokens
from tests.oauth import flows

# Each test runs on SQLite and PostgreSQL: PostgreSQL has its own statements for these.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]


def assert_invalid_grant(response: httpx.Response, error: str = "invalid_grant") -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"] == error


async def test_a_refresh_returns_a_new_pair(client: httpx.AsyncClient) -> None:
    """A refresh answers 200 with a new access token and a new refresh token, same scope."""
    tokens = await flows.obtain_tokens(client, scope="email")
    response = await flows.refresh(client, tokens)
    assert response.status_code == 200, response.text
    assert "no-store" in response.headers["cache-control"]
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert 0 < body["expires_in"] <= 3600
    assert body["access_token"] != tokens.access
    assert body["refresh_token"] != tokens.refresh
    assert body["scope"] == "email"
    assert (await flows.whoami_result(client, body["access_token"]))["email"] is not None


async def test_a_refresh_token_can_be_refreshed_along_a_chain(client: httpx.AsyncClient) -> None:
    """Each new refresh token works once in turn."""
    tokens = await flows.obtain_tokens(client)
    for _ in range(3):
        tokens = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)
    assert (await flows.whoami(client, tokens.access)).status_code == 200


async def test_a_refresh_token_works_only_once(client: httpx.AsyncClient) -> None:
    """The same refresh token a second time, once its new pair is in use: invalid_grant."""
    tokens = await flows.obtain_tokens(client)
    newest = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)
    assert (await flows.whoami(client, newest.access)).status_code == 200
    assert_invalid_grant(await flows.refresh(client, tokens))


async def test_reuse_of_a_spent_refresh_token_revokes_the_whole_family(
    client: httpx.AsyncClient,
) -> None:
    """After reuse, the newest access and refresh tokens of the family stop working too."""
    first = await flows.obtain_tokens(client)
    newest = flows.tokens_of(await flows.refresh(client, first), first.client_id)
    assert (await flows.whoami(client, newest.access)).status_code == 200
    assert_invalid_grant(await flows.refresh(client, first))
    assert (await flows.whoami(client, newest.access)).status_code == 401
    assert (await flows.whoami(client, first.access)).status_code == 401
    assert_invalid_grant(await flows.refresh(client, newest))


async def test_reuse_leaves_other_families_alone(client: httpx.AsyncClient) -> None:
    """Another sign-in of the same customer and client keeps working."""
    client_id = await flows.register(client)
    stolen = await flows.obtain_tokens(client, client_id=client_id)
    other = await flows.obtain_tokens(client, client_id=client_id)
    newest = flows.tokens_of(await flows.refresh(client, stolen), client_id)
    assert (await flows.whoami(client, newest.access)).status_code == 200
    assert_invalid_grant(await flows.refresh(client, stolen))
    assert (await flows.whoami(client, other.access)).status_code == 200
    assert (await flows.refresh(client, other)).status_code == 200


async def test_a_refresh_token_of_another_client_is_invalid_grant(
    client: httpx.AsyncClient,
) -> None:
    """Another client presenting the token: invalid_grant, and the owner's token still works."""
    tokens = await flows.obtain_tokens(client)
    thief = await flows.register(client)
    response = await flows.token_request(
        client,
        {"grant_type": "refresh_token", "client_id": thief, "refresh_token": tokens.refresh},
    )
    assert_invalid_grant(response)
    assert (await flows.refresh(client, tokens)).status_code == 200


async def test_an_expired_refresh_token_is_invalid_grant(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A refresh token past its lifetime: invalid_grant."""
    tokens = await flows.obtain_tokens(client)
    await flows.expire(app, refresh_tokens)
    assert_invalid_grant(await flows.refresh(client, tokens))


async def test_a_refresh_token_lives_at_most_thirty_days(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """The stored expiry of a new refresh token is within 30 days (interface 3.2)."""
    await flows.obtain_tokens(client)
    async with app.services.database.engine.connect() as connection:
        row = (
            await connection.execute(
                select(refresh_tokens.c.created_at, refresh_tokens.c.expires_at)
            )
        ).one()
    assert timedelta(0) < row.expires_at - row.created_at <= timedelta(days=30)


@pytest.mark.parametrize("scope", ["profile", "email profile", "openid profile"])
async def test_a_refresh_cannot_widen_the_scope(client: httpx.AsyncClient, scope: str) -> None:
    """Asking for more than was granted: invalid_scope."""
    tokens = await flows.obtain_tokens(client, scope="email")
    assert_invalid_grant(await flows.refresh(client, tokens, scope=scope), "invalid_scope")


@pytest.mark.parametrize("scope", ["profile", "profile admin"])
async def test_a_refused_scope_leaves_the_refresh_token_unspent(
    client: httpx.AsyncClient, scope: str
) -> None:
    """A refresh refused for its scope (an offered one not granted) spends nothing: the
    same token then refreshes with the granted scope."""
    tokens = await flows.obtain_tokens(client, scope="email")
    assert_invalid_grant(await flows.refresh(client, tokens, scope=scope), "invalid_scope")
    response = await flows.refresh(client, tokens)
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "email"


@pytest.mark.parametrize("scope", ["admin", "email admin", "claudeai", "read write"])
async def test_scopes_not_offered_are_dropped_at_refresh(
    client: httpx.AsyncClient, scope: str
) -> None:
    """Scopes the service does not offer are dropped, not refused (RFC 6749 3.3): the
    refresh keeps the granted scope."""
    tokens = await flows.obtain_tokens(client, scope="email")
    response = await flows.refresh(client, tokens, scope=scope)
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "email"


@pytest.mark.parametrize("scope", ["email", "openid email", "openid offline_access email"])
async def test_a_refresh_may_repeat_the_granted_scope(
    client: httpx.AsyncClient, scope: str
) -> None:
    """The granted scope, with the habitual openid and offline_access dropped as at authorize."""
    tokens = await flows.obtain_tokens(client, scope="openid email")
    response = await flows.refresh(client, tokens, scope=scope)
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "email"


async def test_an_unknown_refresh_token_is_invalid_grant(client: httpx.AsyncClient) -> None:
    """A refresh token nobody issued: invalid_grant."""
    tokens = await flows.obtain_tokens(client)
    assert_invalid_grant(await flows.refresh(client, tokens, "fdrt_made_up"))


async def test_an_access_token_is_not_a_refresh_token(client: httpx.AsyncClient) -> None:
    """The access token presented as a refresh token: invalid_grant."""
    tokens = await flows.obtain_tokens(client)
    assert_invalid_grant(await flows.refresh(client, tokens, tokens.access))


async def test_a_missing_refresh_token_is_invalid_request(client: httpx.AsyncClient) -> None:
    """grant_type refresh_token without refresh_token: invalid_request."""
    tokens = await flows.obtain_tokens(client)
    response = await flows.token_request(
        client, {"grant_type": "refresh_token", "client_id": tokens.client_id}
    )
    assert_invalid_grant(response, "invalid_request")


async def test_a_refresh_token_of_one_company_is_unknown_at_another(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """initech's refresh token at hooli, by a hooli client: invalid_grant."""
    tokens = await flows.obtain_tokens(client)
    hooli_client = await flows.register(client, "hooli")
    response = await flows.token_request(
        client,
        {"grant_type": "refresh_token", "client_id": hooli_client, "refresh_token": tokens.refresh},
        "hooli",
    )
    assert_invalid_grant(response)
