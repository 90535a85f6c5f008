"""Discovery documents (interface 2.1, 2.2, 4.1) and the 404 of every OAuth endpoint of a company
without sign-in (interface 1.4, 7.2)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import BASE_URL
from tests.oauth import flows

AS_PATHS = (
    "/.well-known/oauth-authorization-server/v1/{tenant}/oauth",
    "/.well-known/openid-configuration/v1/{tenant}/oauth",
    "/v1/{tenant}/oauth/.well-known/oauth-authorization-server",
    "/v1/{tenant}/oauth/.well-known/openid-configuration",
)
PRM_PATH = "/.well-known/oauth-protected-resource/v1/{tenant}/mcp"

# acme and globex have no sign-in; dormant is inactive, yankee is in the us region,
# sleepy and faraway have sign-in but are inactive / in the us region; nobody is unknown.
NO_SIGNIN_HERE = ("acme", "globex", "dormant", "yankee", "sleepy", "faraway", "nobody", "NotAKey")

# Explicit anyio mark: the conftest marks coroutines after collection, which would drop
# the parametrization.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("more_companies")]


@pytest.mark.parametrize("path", AS_PATHS)
async def test_authorization_server_metadata_is_served_on_each_path(
    client: httpx.AsyncClient, path: str
) -> None:
    """Each of the four paths answers 200 with initech's issuer and endpoints."""
    response = await client.get(path.format(tenant="initech"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    document = response.json()
    issuer = f"{BASE_URL}/v1/initech/oauth"
    assert document["issuer"] == issuer
    assert document["authorization_endpoint"] == f"{issuer}/authorize"
    assert document["token_endpoint"] == f"{issuer}/token"
    assert document["registration_endpoint"] == f"{issuer}/register"
    assert document["revocation_endpoint"] == f"{issuer}/revoke"
    assert document["response_types_supported"] == ["code"]
    assert sorted(document["grant_types_supported"]) == ["authorization_code", "refresh_token"]
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["token_endpoint_auth_methods_supported"] == ["none"]
    assert sorted(document["scopes_supported"]) == ["email", "profile"]
    assert document["authorization_response_iss_parameter_supported"] is True


async def test_the_four_authorization_server_paths_serve_the_same_document(
    client: httpx.AsyncClient,
) -> None:
    """The same document is served on all four paths (interface 2.1)."""
    documents = [(await client.get(path.format(tenant="initech"))).json() for path in AS_PATHS]
    assert all(document == documents[0] for document in documents)


async def test_each_company_has_its_own_issuer(client: httpx.AsyncClient) -> None:
    """hooli's document names hooli's issuer, not initech's."""
    response = await client.get(AS_PATHS[0].format(tenant="hooli"))
    assert response.status_code == 200
    assert response.json()["issuer"] == f"{BASE_URL}/v1/hooli/oauth"


async def test_protected_resource_metadata_names_the_mcp_endpoint_and_issuer(
    client: httpx.AsyncClient,
) -> None:
    """The protected-resource document describes initech's MCP endpoint (interface 2.2)."""
    response = await client.get(PRM_PATH.format(tenant="initech"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    document = response.json()
    assert document["resource"] == f"{BASE_URL}/v1/initech/mcp"
    assert document["authorization_servers"] == [f"{BASE_URL}/v1/initech/oauth"]
    assert sorted(document["scopes_supported"]) == ["email", "profile"]
    assert document["bearer_methods_supported"] == ["header"]


async def test_documents_are_built_from_the_base_url_not_the_host_header(
    client: httpx.AsyncClient,
) -> None:
    """A request through another accepted Host still gets the configured base URL."""
    response = await client.get(
        PRM_PATH.format(tenant="initech"), headers={"host": "localhost:8000"}
    )
    assert response.status_code == 200
    assert response.json()["resource"] == f"{BASE_URL}/v1/initech/mcp"


@pytest.mark.parametrize("path", AS_PATHS)
@pytest.mark.parametrize("tenant", NO_SIGNIN_HERE)
async def test_authorization_server_metadata_is_404_without_active_signin(
    client: httpx.AsyncClient, path: str, tenant: str
) -> None:
    """No sign-in, no active company, or another region: 404 with an OAuth error body."""
    response = await client.get(path.format(tenant=tenant))
    assert response.status_code == 404
    assert isinstance(response.json()["error"], str)


@pytest.mark.parametrize("tenant", NO_SIGNIN_HERE)
async def test_protected_resource_metadata_is_404_without_active_signin(
    client: httpx.AsyncClient, tenant: str
) -> None:
    """The protected-resource path is 404 for unknown, inactive, other-region or no-sign-in."""
    response = await client.get(PRM_PATH.format(tenant=tenant))
    assert response.status_code == 404
    assert isinstance(response.json()["error"], str)


@pytest.mark.parametrize(
    ("endpoint", "json", "data"),
    [
        ("register", {"redirect_uris": [flows.REDIRECT_URI]}, None),
        ("token", None, {"grant_type": "refresh_token", "refresh_token": "x", "client_id": "x"}),
        ("revoke", None, {"token": "x", "client_id": "x"}),
    ],
)
async def test_json_endpoints_of_a_company_without_signin_are_404_with_oauth_error(
    client: httpx.AsyncClient,
    endpoint: str,
    json: dict[str, Any] | None,
    data: dict[str, str] | None,
) -> None:
    """register, token and revoke of acme answer 404 with an OAuth error (interface 4.4-4.6)."""
    response = await client.post(flows.oauth_path(endpoint, "acme"), json=json, data=data)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    document = response.json()
    assert isinstance(document["error"], str)
    assert set(document) <= {"error", "error_description"}


async def test_authorize_of_a_company_without_signin_is_an_html_404(
    client: httpx.AsyncClient,
) -> None:
    """authorize of acme answers a 404 page, never a redirect (interface 4.3)."""
    params = flows.authorize_params("fdc_whatever", flows.Pkce.new())
    response = await flows.authorize(client, params, "acme")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "location" not in response.headers


@pytest.mark.parametrize(
    ("method", "endpoint"),
    [("POST", "consent"), ("GET", "login"), ("POST", "login"), ("GET", "callback")],
)
async def test_sign_in_pages_of_a_company_without_signin_are_html_404(
    client: httpx.AsyncClient, method: str, endpoint: str
) -> None:
    """The browser steps of acme's sign-in answer 404 pages."""
    response = await client.request(
        method, flows.oauth_path(endpoint, "acme"), data={"flow": "x"} if method == "POST" else None
    )
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
