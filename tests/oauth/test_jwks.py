"""The company's published signing keys (oauth.jwks): named by its metadata's ``jwks_uri``,
public keys only, kept by verifiers a short while, and served only by a company with
sign-in, as its metadata is. The document fits openapi.yaml's schema."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import httpx
import jsonschema
import jwt
import pytest
import yaml

from frontdesk.tools.identity_tokens import JWKS_MAX_AGE_SECONDS
from tests.oauth import flows

pytestmark = pytest.mark.anyio


def key_set_schema() -> dict[str, Any]:
    document = yaml.safe_load(files("frontdesk").joinpath("openapi.yaml").read_text())
    schema: dict[str, Any] = document["components"]["schemas"]["JsonWebKeySet"]
    return schema


async def test_the_metadata_names_the_key_set_and_it_is_served_there(
    client: httpx.AsyncClient,
) -> None:
    metadata = await client.get("/.well-known/oauth-authorization-server/v1/initech/oauth")
    assert metadata.status_code == 200
    jwks_uri = metadata.json()["jwks_uri"]
    assert jwks_uri == f"{flows.issuer()}/jwks.json"
    response = await client.get(jwks_uri)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == f"public, max-age={JWKS_MAX_AGE_SECONDS}"
    document = response.json()
    jsonschema.validate(document, key_set_schema())
    [key] = document["keys"]
    assert not {"d", "p", "q", "dp", "dq", "qi", "k"} & key.keys()
    # A standard library reads it as it is.
    parsed = jwt.PyJWKSet.from_dict(document)
    assert parsed[key["kid"]].algorithm_name == "ES256"


async def test_the_same_key_set_is_served_until_a_rotation(client: httpx.AsyncClient) -> None:
    first = await client.get("/v1/initech/oauth/jwks.json")
    second = await client.get("/v1/initech/oauth/jwks.json")
    assert first.content == second.content


@pytest.mark.parametrize("tenant", ["acme", "nobody-has-this-key"])
async def test_a_company_without_signin_or_none_at_all_has_no_key_set(
    client: httpx.AsyncClient, tenant: str
) -> None:
    response = await client.get(f"/v1/{tenant}/oauth/jwks.json")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
