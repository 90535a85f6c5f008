"""A path no route serves, a trailing slash included: 404 in the body of the path's family,
never a redirect. Starlette used to answer ``POST .../oauth/token/`` with a 307 to an
``http://`` URL, built from the scheme the server sees even behind a TLS proxy, which a
client follows by resending its code or refresh token in clear (frontdesk.unrouted)."""

from __future__ import annotations

import httpx
import pytest

from frontdesk.protocol.errors import INVALID_REQUEST
from frontdesk.unrouted import NO_ROUTE

pytestmark = pytest.mark.anyio

FORM = {"content-type": "application/x-www-form-urlencoded"}
# Every OAuth endpoint and discovery document, spelt with a trailing slash.
OAUTH_WITH_SLASH = (
    ("POST", "/v1/acme/oauth/token/"),
    ("POST", "/v1/acme/oauth/register/"),
    ("POST", "/v1/acme/oauth/revoke/"),
    ("GET", "/v1/acme/oauth/authorize/"),
    ("GET", "/v1/acme/oauth/.well-known/oauth-authorization-server/"),
    ("GET", "/.well-known/oauth-authorization-server/v1/acme/oauth/"),
    ("GET", "/.well-known/openid-configuration/v1/acme/oauth/"),
    ("GET", "/.well-known/oauth-protected-resource/v1/acme/mcp/"),
    ("POST", "/v1/acme/oauth/no-such-endpoint"),
)


async def test_oauth_paths_with_a_trailing_slash_are_an_oauth_404(
    client: httpx.AsyncClient,
) -> None:
    """No 307 to resend the request to: a 404 with an OAuth error body (RFC 6749 5.2)."""
    for method, path in OAUTH_WITH_SLASH:
        response = await client.request(method, path, content=b"code=x", headers=FORM)
        assert response.status_code == 404, (method, path, response.status_code)
        assert "location" not in response.headers, path
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {"error": "not_found", "error_description": NO_ROUTE}
        assert response.headers["cache-control"] == "no-store"


async def test_the_mcp_path_with_a_trailing_slash_is_a_json_rpc_404(
    client: httpx.AsyncClient,
) -> None:
    """An MCP client is told in its own envelope, and nothing it sent is run."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    for path in ("/v1/acme/mcp/", "/v1/acme/mcp/extra"):
        response = await client.post(
            path, content=body, headers={"content-type": "application/json"}
        )
        assert response.status_code == 404, path
        assert response.headers["content-type"] == "application/json"
        envelope = response.json()
        assert envelope["jsonrpc"] == "2.0"
        assert envelope["id"] is None
        assert envelope["error"]["code"] == INVALID_REQUEST
        assert NO_ROUTE in envelope["error"]["message"]


async def test_other_paths_with_a_trailing_slash_are_a_plain_404(
    client: httpx.AsyncClient,
) -> None:
    """The service's own paths and the customer's page: the plain 404 of any unknown path."""
    for path in ("/healthz/", "/readyz/", "/metrics/", "/openapi.yaml/", "/v1/acme/account/"):
        response = await client.get(path)
        assert response.status_code == 404, path
        assert "location" not in response.headers, path
        assert response.text == "Not Found"


async def test_the_paths_as_documented_are_still_served(client: httpx.AsyncClient) -> None:
    """Without the slash nothing changes: the routes themselves answer."""
    assert (await client.get("/healthz")).status_code == 200
    response = await client.get("/.well-known/oauth-protected-resource/v1/initech/mcp")
    assert response.status_code == 200
    response = await client.post("/v1/initech/oauth/token", content=b"code=x", headers=FORM)
    # Refused by the token endpoint itself (no client), not by the router.
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
