"""The enterprise identity providers a company trusts, through the admin API's sign-in part:
set, read back, refused with the field's path when wrong, and advertised in the company's
metadata once set (oauth.assertion_grant)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from frontdesk.config import Settings
from tests.admin_api.conftest import admin

pytestmark = [pytest.mark.anyio]

PROVIDER = {
    "issuer": "https://idp.newco.example",
    "jwks_uri": "https://idp.newco.example/keys",
    "algorithms": ["RS256"],
    "scopes": ["email"],
}
METADATA = "/.well-known/oauth-authorization-server/v1/newco/oauth"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(company_cache_seconds=0)


async def test_the_signin_part_sets_the_trusted_providers(
    client: httpx.AsyncClient, operator_key: str
) -> None:
    company = {"name": "New Co", "signin": {"login": {"type": "dev"}}}
    assert (await admin(client, "PUT", "/companies/newco", operator_key, json=company)).is_success
    assert JWT_BEARER not in (await client.get(METADATA)).json()["grant_types_supported"]

    signin = {"login": {"type": "dev"}, "enterprise_providers": [PROVIDER]}
    put = await admin(client, "PUT", "/companies/newco/signin", operator_key, json=signin)
    assert put.status_code == 200, put.text
    read = await admin(client, "GET", "/companies/newco/signin", operator_key)
    [stored] = read.json()["enterprise_providers"]
    assert {name: stored[name] for name in PROVIDER} == PROVIDER
    assert (stored["subjects"], stored["refresh_tokens"]) == ("issuer", False)
    metadata = (await client.get(METADATA)).json()
    assert JWT_BEARER in metadata["grant_types_supported"]
    assert metadata["authorization_grant_profiles_supported"] == [
        "urn:ietf:params:oauth:grant-profile:id-jag"
    ]

    wrong = {**signin, "enterprise_providers": [{**PROVIDER, "algorithms": ["none"]}]}
    refused = await admin(client, "PUT", "/companies/newco/signin", operator_key, json=wrong)
    assert refused.status_code == 422
    field = refused.json()["errors"][0]["field"]
    assert field == "signin.enterprise_providers[0].algorithms[0]"
