"""The token endpoint and the sign-in callback count their callers before any lookup
(FRONTDESK_OAUTH_RATE_LIMIT): per address, and at the token endpoint per client id too."""

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
