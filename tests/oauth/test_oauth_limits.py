"""Authorize, token, revocation and the sign-in callback count their callers before any
lookup (FRONTDESK_OAUTH_RATE_LIMIT): per address, and at the token and revocation endpoints
per client id too (FRONTDESK_OAUTH_CLIENT_RATE_LIMIT)."""

from __future__ import annotations

import httpx

from tests.oauth import flows
from tests.oauth.conftest import Serve


async def test_the_token_endpoint_refuses_an_address_past_its_limit(serve: Serve) -> None:
    """Guessing codes costs the address: past the limit, 429 with Retry-After."""
    client = (await serve(oauth_rate_limit="3/minute")).client
    form = {"grant_type": "authorization_code", "code": "guess", "client_id": "nobody"}
    for _ in range(3):
        response = await client.post(flows.oauth_path("token"), data=form, headers=flows.FORM)
        assert response.status_code in (400, 401)
    response = await client.post(flows.oauth_path("token"), data=form, headers=flows.FORM)
    assert response.status_code == 429
    assert response.json()["error"] == "rate_limited"
    assert int(response.headers["retry-after"]) >= 1


async def test_the_token_endpoint_counts_a_client_id_from_every_address(serve: Serve) -> None:
    """One client id named from many addresses is limited as well."""
    served = await serve(oauth_rate_limit="2/minute", oauth_client_rate_limit="2/minute")
    form = {"grant_type": "authorization_code", "code": "guess", "client_id": "shared"}
    statuses = []
    for number in range(3):
        transport = httpx.ASGITransport(app=served.app, client=(f"198.51.100.{number}", 4000))
        async with httpx.AsyncClient(
            transport=transport, base_url=str(served.client.base_url)
        ) as other:
            response = await other.post(flows.oauth_path("token"), data=form, headers=flows.FORM)
            statuses.append(response.status_code)
    # Each address is within its own allowance; the client id is not.
    assert statuses == [401, 401, 429]


async def test_the_callback_refuses_an_address_past_its_limit(serve: Serve) -> None:
    """Each callback may cost a round trip to the identity provider: limited per address."""
    client = (await serve(oauth_rate_limit="2/minute")).client
    for _ in range(2):
        response = await client.get(flows.oauth_path("callback"), params={"state": "x"})
        assert response.status_code != 429
    response = await client.get(flows.oauth_path("callback"), params={"state": "x"})
    assert response.status_code == 429


async def test_authorize_refuses_an_address_past_its_limit_with_a_page(serve: Serve) -> None:
    """The customer's browser gets a page, with Retry-After, never a redirect: the client
    and its redirect URI are not checked yet (nothing is read before the count)."""
    client = (await serve(oauth_rate_limit="2/minute")).client
    params = flows.authorize_params("nobody", flows.Pkce.new())
    for _ in range(2):
        response = await flows.authorize(client, params)
        assert response.status_code == 400  # an unknown client: a page of its own
    response = await flows.authorize(client, params)
    assert response.status_code == 429
    assert response.headers["content-type"].startswith("text/html")
    assert "Too many sign-in attempts" in response.text
    assert "location" not in response.headers
    assert 1 <= int(response.headers["retry-after"]) <= 60


async def test_authorize_counts_before_the_company_is_looked_up(serve: Serve) -> None:
    """Made-up tenant keys cost the address too: past the limit, 429 instead of 404."""
    client = (await serve(oauth_rate_limit="2/minute")).client
    statuses = [
        (await client.get(flows.oauth_path("authorize", f"made-up-{number}"))).status_code
        for number in range(3)
    ]
    assert statuses == [404, 404, 429]


async def test_revocation_refuses_an_address_past_its_limit(serve: Serve) -> None:
    """Revocation authenticates a client as the token endpoint does, and is limited alike."""
    client = (await serve(oauth_rate_limit="2/minute")).client
    for _ in range(2):
        response = await flows.revoke(client, "some-token", "nobody")
        assert response.status_code == 401
    response = await flows.revoke(client, "some-token", "nobody")
    assert response.status_code == 429
    assert response.json()["error"] == "rate_limited"
    assert int(response.headers["retry-after"]) >= 1


async def test_revocation_counts_a_client_id_from_every_address(serve: Serve) -> None:
    served = await serve(oauth_rate_limit="2/minute", oauth_client_rate_limit="2/minute")
    statuses = []
    for number in range(3):
        transport = httpx.ASGITransport(app=served.app, client=(f"198.51.100.{number}", 4000))
        async with httpx.AsyncClient(
            transport=transport, base_url=str(served.client.base_url)
        ) as other:
            response = await flows.revoke(other, "some-token", "shared")
            statuses.append(response.status_code)
    assert statuses == [401, 401, 429]


async def test_revocation_counts_before_the_company_is_looked_up(serve: Serve) -> None:
    client = (await serve(oauth_rate_limit="2/minute")).client
    statuses = [
        (await flows.revoke(client, "some-token", "nobody", f"made-up-{number}")).status_code
        for number in range(3)
    ]
    assert statuses == [404, 404, 429]
