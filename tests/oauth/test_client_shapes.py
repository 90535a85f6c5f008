"""The registrations, scopes and redirects that real MCP products send (shapes from their
public issue threads), each taken through to the step it used to fail at."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.oauth.pages import SCOPE_TEXT
from tests.oauth import flows

# What Claude's connector registers: a secret method, both grants, its own scope.
CLAUDE_REGISTRATION = {
    "client_name": "Claude",
    "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "client_secret_post",
    "scope": "claudeai",
}
VSCODE_REGISTERED = "http://127.0.0.1:33418/"
CURSOR_REDIRECT = "cursor://anysphere.cursor-mcp/oauth/callback"
NATIVE_COMPANIES = """
companies:
  - tenant_key: nativeco
    name: Native Co
    signin:
      login: {type: dev}
      native_redirect_schemes: [cursor]
"""


async def test_a_claude_shaped_registration_is_registered_as_a_public_client(
    client: httpx.AsyncClient,
) -> None:
    """client_secret_post is registered as public and answered with none (RFC 7591 3.2.1)."""
    response = await flows.register_response(client, CLAUDE_REGISTRATION)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none"
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert "client_secret" not in body


@pytest.mark.parametrize("scope", ["claudeai", "read write", "openid email claudeai"])
async def test_claude_scopes_are_dropped_and_the_token_says_what_was_granted(
    client: httpx.AsyncClient, scope: str
) -> None:
    """Scopes we do not offer are dropped; the consent page and the token show the grant."""
    client_id = await flows.register(client)
    page = await flows.consent_page(client, client_id, flows.Pkce.new(), scope=scope)
    granted = "email" if "email" in scope else "profile email"
    for offered in granted.split():
        assert SCOPE_TEXT[offered] in page.text
    tokens = await flows.obtain_tokens(client, client_id=client_id, scope=scope)
    assert tokens.scope == granted


async def test_vscode_coming_back_on_another_loopback_port_signs_in(
    client: httpx.AsyncClient,
) -> None:
    """Registered on port 33418, back on 51234 (busy port): the sign-in completes there."""
    client_id = await flows.register(client, redirect_uris=[VSCODE_REGISTERED])
    moved = "http://127.0.0.1:51234/"
    signed_in = await flows.sign_in(client, client_id=client_id, redirect_uri=moved)
    response = await flows.exchange(client, signed_in)
    assert response.status_code == 200, response.text


async def test_a_loopback_redirect_on_another_path_is_still_refused(
    client: httpx.AsyncClient,
) -> None:
    """Only the port is free: another path is an unregistered redirect (400 page)."""
    client_id = await flows.register(client, redirect_uris=[VSCODE_REGISTERED])
    params = flows.authorize_params(
        client_id, flows.Pkce.new(), redirect_uri="http://127.0.0.1:51234/elsewhere"
    )
    response = await flows.authorize(client, params)
    assert response.status_code == 400
    assert "location" not in response.headers


async def test_the_code_must_be_redeemed_with_the_redirect_uri_actually_used(
    client: httpx.AsyncClient,
) -> None:
    """The code is bound to the port the client came back on, not the registered one."""
    client_id = await flows.register(client, redirect_uris=[VSCODE_REGISTERED])
    signed_in = await flows.sign_in(
        client, client_id=client_id, redirect_uri="http://127.0.0.1:51234/"
    )
    response = await flows.exchange(client, signed_in, redirect_uri=VSCODE_REGISTERED)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


async def test_a_cursor_registration_works_for_a_company_that_allows_its_scheme(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """cursor:// is registered, signed in through and redeemed where the company opted in."""
    await flows.add_companies(app, tmp_path, NATIVE_COMPANIES)
    client_id = await flows.register(client, "nativeco", redirect_uris=[CURSOR_REDIRECT])
    signed_in = await flows.sign_in(
        client, "nativeco", client_id=client_id, redirect_uri=CURSOR_REDIRECT
    )
    response = await flows.exchange(client, signed_in)
    assert response.status_code == 200, response.text


async def test_a_cursor_registration_is_refused_by_a_company_that_did_not_opt_in(
    client: httpx.AsyncClient,
) -> None:
    """Off by default: the refusal names the URI and says which schemes are allowed."""
    response = await flows.register_response(
        client, {"client_name": "Cursor", "redirect_uris": [CURSOR_REDIRECT]}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_redirect_uri"
    assert CURSOR_REDIRECT in body["error_description"]
    assert "no private-use schemes" in body["error_description"]


@pytest.mark.parametrize(
    "resource", ["https://evil.example/v1/initech/mcp", flows.mcp_url("acme"), flows.issuer()]
)
async def test_a_token_request_for_another_resource_is_invalid_target(
    client: httpx.AsyncClient, resource: str
) -> None:
    """RFC 8707 2.2: tokens here are for this company's MCP endpoint only."""
    signed_in = await flows.sign_in(client)
    response = await flows.exchange(client, signed_in, resource=resource)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"


async def test_a_token_request_naming_this_endpoint_as_resource_is_served(
    client: httpx.AsyncClient,
) -> None:
    """The company's own MCP endpoint, with or without a trailing slash, is the resource."""
    signed_in = await flows.sign_in(client)
    response = await flows.exchange(client, signed_in, resource=flows.mcp_url() + "/")
    assert response.status_code == 200, response.text
    tokens = flows.tokens_of(response, signed_in.client_id)
    refreshed = await flows.refresh(client, tokens, resource=flows.mcp_url())
    assert refreshed.status_code == 200, refreshed.text
