"""Token revocation (interface 2.7, 3.4, 4.6; RFC 7009): 200 whatever the token, a refresh token
takes its family with it, an access token goes alone."""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.oauth import flows

# Each test runs on SQLite and PostgreSQL: PostgreSQL has its own statements for these.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]


def assert_revoked_ok(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert response.content == b""


@pytest.mark.parametrize("token", ["fdat_unknown", "fdrt_unknown", "anything at all", "x" * 500])
async def test_an_unknown_token_is_revoked_with_200(client: httpx.AsyncClient, token: str) -> None:
    """Revocation answers 200 with an empty body even for a token nobody issued."""
    client_id = await flows.register(client)
    assert_revoked_ok(await flows.revoke(client, token, client_id))


async def test_revoking_a_refresh_token_revokes_its_family(client: httpx.AsyncClient) -> None:
    """The refresh token and the access token issued with it stop working."""
    tokens = await flows.obtain_tokens(client)
    assert_revoked_ok(await flows.revoke(client, tokens.refresh, tokens.client_id))
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    response = await flows.refresh(client, tokens)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


async def test_revoking_a_spent_refresh_token_revokes_the_newest_pair(
    client: httpx.AsyncClient,
) -> None:
    """A refresh token already rotated still names its family: the current pair goes too."""
    first = await flows.obtain_tokens(client)
    newest = flows.tokens_of(await flows.refresh(client, first), first.client_id)
    assert_revoked_ok(await flows.revoke(client, first.refresh, first.client_id))
    assert (await flows.whoami(client, newest.access)).status_code == 401
    assert (await flows.refresh(client, newest)).status_code == 400


async def test_revoking_an_access_token_leaves_the_refresh_token_working(
    client: httpx.AsyncClient,
) -> None:
    """The access token is refused at once; the refresh token still buys a working pair."""
    tokens = await flows.obtain_tokens(client)
    assert_revoked_ok(await flows.revoke(client, tokens.access, tokens.client_id))
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    renewed = flows.tokens_of(await flows.refresh(client, tokens), tokens.client_id)
    assert (await flows.whoami(client, renewed.access)).status_code == 200


async def test_revoking_twice_is_still_200(client: httpx.AsyncClient) -> None:
    """A token already revoked: 200 again."""
    tokens = await flows.obtain_tokens(client)
    assert_revoked_ok(await flows.revoke(client, tokens.refresh, tokens.client_id))
    assert_revoked_ok(await flows.revoke(client, tokens.refresh, tokens.client_id))


@pytest.mark.parametrize("which", ["access", "refresh"])
async def test_another_client_cannot_revoke_a_token(client: httpx.AsyncClient, which: str) -> None:
    """Another client's revocation answers 200 but the token keeps working (RFC 7009 2.1)."""
    tokens = await flows.obtain_tokens(client)
    other = await flows.register(client)
    token = tokens.access if which == "access" else tokens.refresh
    assert_revoked_ok(await flows.revoke(client, token, other))
    assert (await flows.whoami(client, tokens.access)).status_code == 200
    assert (await flows.refresh(client, tokens)).status_code == 200


async def test_the_client_may_name_itself_with_http_basic(client: httpx.AsyncClient) -> None:
    """The client id as the Basic username works at revoke too."""
    tokens = await flows.obtain_tokens(client)
    credentials = base64.b64encode(f"{tokens.client_id}:".encode()).decode()
    response = await client.post(
        flows.oauth_path("revoke"),
        data={"token": tokens.access},
        headers={**flows.FORM, "authorization": f"Basic {credentials}"},
    )
    assert_revoked_ok(response)
    assert (await flows.whoami(client, tokens.access)).status_code == 401


async def test_an_unknown_client_cannot_revoke(client: httpx.AsyncClient) -> None:
    """An unknown client is 401 invalid_client, and the token keeps working."""
    tokens = await flows.obtain_tokens(client)
    response = await flows.revoke(client, tokens.access, "fdc_unknown")
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert (await flows.whoami(client, tokens.access)).status_code == 200


async def test_a_missing_token_is_invalid_request(client: httpx.AsyncClient) -> None:
    """A revocation without token: 400 invalid_request."""
    client_id = await flows.register(client)
    response = await client.post(
        flows.oauth_path("revoke"), data={"client_id": client_id}, headers=flows.FORM
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


async def test_revocation_at_a_company_without_signin_is_404(client: httpx.AsyncClient) -> None:
    """acme has no sign-in: 404 with an OAuth error body (interface 4.6)."""
    response = await flows.revoke(client, "fdat_x", "fdc_x", "acme")
    assert response.status_code == 404
    assert isinstance(response.json()["error"], str)


async def test_a_token_of_one_company_cannot_be_revoked_at_another(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    """hooli's revoke endpoint does not touch initech's tokens."""
    tokens = await flows.obtain_tokens(client)
    hooli_client = await flows.register(client, "hooli")
    assert_revoked_ok(await flows.revoke(client, tokens.refresh, hooli_client, "hooli"))
    assert (await flows.whoami(client, tokens.access)).status_code == 200
