"""Tenant isolation (DESIGN: tokens are bound to the tenant): a client, code, access token,
refresh token and session id of one company with sign-in are unknown at another, at
every endpoint, and trying them there changes nothing at either. tests/oauth proves
single cases (one credential at one endpoint each); this is the whole matrix, on two
companies applied from their own companies file."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.adversarial.conftest import snapshot
from tests.oauth import flows

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("signin_companies")]

A, B = "northwind", "contoso"


@dataclass(frozen=True, slots=True)
class Credentials:
    client_id: str
    code: flows.SignIn
    tokens: flows.Tokens
    session_id: str


async def credentials(client: httpx.AsyncClient, tenant: str) -> Credentials:
    """Everything a client of ``tenant`` holds: an unspent code, a token pair, a session."""
    client_id = await flows.register(client, tenant)
    unspent = await flows.sign_in(client, tenant, client_id=client_id)
    tokens = await flows.obtain_tokens(client, tenant, client_id=client_id)
    initialized = await flows.mcp(
        client,
        flows.rpc(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
        ),
        tenant,
    )
    return Credentials(client_id, unspent, tokens, initialized.headers["mcp-session-id"])


async def test_nothing_of_one_company_is_known_at_another(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """A's client, code, tokens and session are unknown at B, and trying them changes nothing."""
    a = await credentials(client, A)
    b_client = await flows.register(client, B)
    before = await snapshot(app)

    # A's client at B: authorize is a page, token and revoke are invalid_client.
    authorize = await flows.authorize(
        client, flows.authorize_params(a.client_id, flows.Pkce.new()), B
    )
    assert authorize.status_code == 400
    assert "location" not in authorize.headers
    at_b = flows.Tokens(a.tokens.access, a.tokens.refresh, a.tokens.scope, a.client_id, B)
    assert (await flows.refresh(client, at_b)).status_code == 401
    assert (await flows.revoke(client, a.tokens.refresh, a.client_id, B)).status_code == 401
    code_at_b = flows.SignIn(
        a.client_id, a.code.code, None, a.code.iss, a.code.pkce, a.code.redirect_uri, B
    )
    assert (await flows.exchange(client, code_at_b)).status_code == 401

    # A's code, with its verifier, redeemed by B's client at B.
    stolen = flows.SignIn(
        b_client, a.code.code, None, a.code.iss, a.code.pkce, a.code.redirect_uri, B
    )
    response = await flows.exchange(client, stolen)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")

    # A's refresh token by B's client at B.
    response = await flows.refresh(client, flows.Tokens("", a.tokens.refresh, "", b_client, B))
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")

    # A's access token, and A's refresh token as one, at B's MCP endpoint.
    for token in (a.tokens.access, a.tokens.refresh):
        response = await flows.whoami(client, token, B)
        assert response.status_code == 401
        assert 'error="invalid_token"' in response.headers["www-authenticate"]

    # A's session id at B.
    response = await client.post(
        f"/v1/{B}/mcp", json=flows.rpc("ping"), headers={"mcp-session-id": a.session_id}
    )
    assert response.status_code == 404

    # A's tokens revoked by B's client at B: 200 (RFC 7009), and nothing happens.
    for token in (a.tokens.access, a.tokens.refresh):
        assert (await flows.revoke(client, token, b_client, B)).status_code == 200

    assert await snapshot(app) == before

    # Everything still works at A.
    assert (await flows.whoami_result(client, a.tokens.access, A))["guest"] is False
    response = await client.post(
        f"/v1/{A}/mcp", json=flows.rpc("ping"), headers={"mcp-session-id": a.session_id}
    )
    assert response.status_code == 200
    assert (await flows.exchange(client, a.code)).status_code == 200
    assert (await flows.refresh(client, a.tokens)).status_code == 200


async def test_the_same_customer_at_two_companies_is_two_customers(
    client: httpx.AsyncClient,
) -> None:
    """One email signed in at both: each company's token speaks only for its own record."""
    at_a = await flows.obtain_tokens(client, A, email="same@example.com")
    at_b = await flows.obtain_tokens(client, B, email="same@example.com")
    assert (await flows.whoami(client, at_a.access, B)).status_code == 401
    assert (await flows.whoami(client, at_b.access, A)).status_code == 401
    assert (await flows.whoami_result(client, at_a.access, A))["email"] == "same@example.com"
    assert (await flows.whoami_result(client, at_b.access, B))["email"] == "same@example.com"
