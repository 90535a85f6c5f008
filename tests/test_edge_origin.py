"""The Origin check (MCP 2025-11-25 transports) and CORS for browser clients."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from frontdesk.config import Settings
from tests.support.edge import INITIALIZE, listed, serving

# Explicit, so that anyio keeps each test's parametrization.
pytestmark = pytest.mark.anyio


# Origin (MCP 2025-11-25 transports: a present, invalid Origin is answered 403)


async def test_a_foreign_origin_is_refused_on_every_request(
    make_settings: Callable[..., Settings],
) -> None:
    """With FRONTDESK_CORS_ORIGINS restricted, a request from another origin is refused
    with 403 whatever its method, not only its preflight, and is not served."""
    async with serving(make_settings(cors_origins=["https://app.example"]), start=True) as client:
        foreign = {"Origin": "https://evil.example"}
        call = await client.post("/v1/acme/mcp", json=INITIALIZE, headers=foreign)
        page = await client.get("/healthz", headers=foreign)
        preflight = await client.options(
            "/v1/acme/mcp", headers={**foreign, "Access-Control-Request-Method": "POST"}
        )
        allowed = await client.post(
            "/v1/acme/mcp", json=INITIALIZE, headers={"Origin": "https://app.example"}
        )
        without = await client.post("/v1/acme/mcp", json=INITIALIZE)
    for refused in (call, page, preflight):
        assert refused.status_code == 403
        assert refused.json()["error"] == "forbidden_origin"
        assert not any(name.startswith("access-control-") for name in refused.headers)
        assert "mcp-session-id" not in refused.headers
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert "mcp-session-id" in allowed.headers
    # No Origin: not a browser's request, so nothing to check.
    assert without.status_code == 200


@pytest.mark.parametrize(
    ("host", "origin"),
    [("127.0.0.1:8000", "http://127.0.0.1:8000"), ("localhost:8000", "http://localhost:8000")],
)
async def test_the_services_own_pages_may_post_to_it(
    make_settings: Callable[..., Settings], host: str, origin: str
) -> None:
    """The sign-in and consent forms post with the service's own origin (browsers send
    Origin on every POST): never refused, whatever FRONTDESK_CORS_ORIGINS lists."""
    async with serving(make_settings(cors_origins=["https://app.example"]), start=True) as client:
        own = await client.post(
            "/v1/acme/mcp", json=INITIALIZE, headers={"Host": host, "Origin": origin}
        )
        other_port = await client.post(
            "/v1/acme/mcp", json=INITIALIZE, headers={"Origin": "http://127.0.0.1:8001"}
        )
    assert own.status_code == 200
    assert other_port.status_code == 403


@pytest.mark.parametrize("origin", ["null", "https://APP.example", "https://app.example:443"])
async def test_an_origin_must_match_a_listed_one_exactly(
    make_settings: Callable[..., Settings], origin: str
) -> None:
    """Origins are compared as the browser serializes them: no case folding, no default
    port, and the opaque "null" origin is never a listed one."""
    async with serving(make_settings(cors_origins=["https://app.example"])) as client:
        response = await client.get("/healthz", headers={"Origin": origin})
    assert response.status_code == 403


async def test_every_origin_is_allowed_by_default(client: httpx.AsyncClient) -> None:
    """The default FRONTDESK_CORS_ORIGINS, *, allows any origin, "null" included."""
    for origin in ("https://inspector.example", "null"):
        response = await client.post("/v1/acme/mcp", json=INITIALIZE, headers={"Origin": origin})
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "*"


# CORS


async def test_an_origin_gets_cors_headers_exposing_auth_and_session(
    client: httpx.AsyncClient,
) -> None:
    """A browser client may read WWW-Authenticate, Mcp-Session-Id, Retry-After and
    X-Request-Id from MCP responses."""
    response = await client.post(
        "/v1/acme/mcp", json=INITIALIZE, headers={"Origin": "https://inspector.example"}
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    exposed = listed(response.headers["access-control-expose-headers"])
    assert exposed == {"www-authenticate", "mcp-session-id", "retry-after", "x-request-id"}
    assert "mcp-session-id" in response.headers


async def test_a_sign_in_challenge_is_readable_from_a_browser(client: httpx.AsyncClient) -> None:
    """A refused token's 401 carries the CORS headers too, so a browser client can read
    WWW-Authenticate and find where to sign in."""
    response = await client.post(
        "/v1/initech/mcp",
        json=INITIALIZE,
        headers={"Origin": "https://inspector.example", "Authorization": "Bearer not-a-token"},
    )
    assert response.status_code == 401
    assert "www-authenticate" in response.headers
    assert response.headers["access-control-allow-origin"] == "*"
    assert "www-authenticate" in listed(response.headers["access-control-expose-headers"])


async def test_a_request_without_origin_gets_no_cors_headers(client: httpx.AsyncClient) -> None:
    """CORS headers answer browsers; other clients are not sent them."""
    response = await client.get("/healthz")
    assert not any(name.startswith("access-control-") for name in response.headers)


async def test_a_preflight_allows_the_mcp_methods_and_the_asked_headers(
    client: httpx.AsyncClient,
) -> None:
    """OPTIONS from a browser allows the MCP methods and every header asked for, the
    2026-07-28 Mcp-Param-* headers (named after each tool's arguments) included."""
    asked = "authorization, content-type, mcp-session-id, mcp-protocol-version, mcp-param-city"
    response = await client.options(
        "/v1/acme/mcp",
        headers={
            "Origin": "https://inspector.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": asked,
        },
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert listed(response.headers["access-control-allow-methods"]) == {
        "get",
        "post",
        "delete",
        "options",
    }
    assert listed(response.headers["access-control-allow-headers"]) == listed(asked)
    assert response.headers["access-control-max-age"] == "600"


async def test_a_preflight_for_another_method_is_refused(client: httpx.AsyncClient) -> None:
    """Only the methods MCP and OAuth use may be sent from a browser."""
    response = await client.options(
        "/v1/acme/mcp",
        headers={"Origin": "https://inspector.example", "Access-Control-Request-Method": "PUT"},
    )
    assert response.status_code == 400
    assert "access-control-allow-origin" in response.headers


async def test_restricted_origins_are_echoed_and_vary(
    make_settings: Callable[..., Settings],
) -> None:
    """A listed origin is echoed back (not *), with Vary: Origin for caches."""
    settings = make_settings(cors_origins=["https://app.example", "https://other.example"])
    async with serving(settings) as client:
        response = await client.get("/healthz", headers={"Origin": "https://app.example"})
        preflight = await client.options(
            "/v1/acme/mcp",
            headers={"Origin": "https://other.example", "Access-Control-Request-Method": "POST"},
        )
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    assert "origin" in listed(response.headers["vary"])
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://other.example"
    assert "origin" in listed(preflight.headers["vary"])
