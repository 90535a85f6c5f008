"""Signed identity through an ``http`` tool (``identity: jwt``, frontdesk.tools.identity_tokens): a
signed-in customer's call reaches a real loopback API that verifies its JWT with PyJWT (the
verifier of examples/verify_identity.py) against the company's keys, fetched over HTTP from
Frontdesk itself; the claims are as specified; a guest's call, and a company that did not
choose it, carry no token."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import anyio
import jwt
import pytest
from examples.verify_identity import IdentityVerifier

from frontdesk.tools.identity_tokens import LIFETIME_SECONDS
from tests.conftest import BASE_URL, ROOT
from tests.oauth import flows
from tests.support.listening import listening_on_loopback
from tests.tools.backends import (
    DEADLINE,
    Handler,
    Json,
    Responder,
    ScriptedBackend,
    call_tool,
    company,
    http_tool,
)
from tests.tools.conftest import Serve

pytestmark = pytest.mark.anyio

TENANT = "initrode"
ISSUER = f"{BASE_URL}/v1/{TENANT}/oauth"
EXAMPLE = ROOT / "examples" / "verify_identity.py"


def verifying(verifier: IdentityVerifier, verified: list[Json]) -> Responder:
    """An API behind a standard JWT check: 401 without a valid token, else the claims."""

    def respond(handler: Handler) -> None:
        try:
            claims = verifier.verify(handler.headers.get("authorization", ""))
        except jwt.PyJWTError as error:
            handler.send(401, json.dumps({"text": f"refused: {error}"}).encode())
            return
        verified.append(claims)
        handler.send(200, json.dumps({"text": "verified", "structuredContent": claims}).encode())

    return respond


def jwt_tool(name: str, url: str, **provider: Any) -> Json:
    tool = http_tool(name, url, access="personal")
    tool["provider"].update({"identity": "jwt", **provider})
    return tool


async def test_a_signed_in_call_carries_a_jwt_the_api_verifies_against_the_published_keys(
    serve: Serve, backend: ScriptedBackend
) -> None:
    url = backend.url("/api")
    served = await serve(company(TENANT, jwt_tool("points", url), signin=True))
    async with listening_on_loopback(served.app) as listening:
        jwks_url = f"{listening}/v1/{TENANT}/oauth/jwks.json"
        verified: list[Json] = []
        backend.routes["/api"] = verifying(IdentityVerifier(ISSUER, url, jwks_url), verified)
        tokens = await flows.obtain_tokens(
            served.client, TENANT, email="Ada@Initrode.example", name="Ada L"
        )
        result = await call_tool(served.client, TENANT, "points", token=tokens.access)
    assert result["isError"] is False, result
    [claims] = verified
    assert result["structuredContent"] == claims
    now = time.time()
    assert claims.pop("iat") <= now < claims.pop("exp") <= now + LIFETIME_SECONDS + 1
    assert len(claims.pop("jti")) >= 16
    assert claims == {
        "iss": ISSUER,
        "aud": url,
        "sub": "dev:ada@initrode.example",
        "email": "Ada@Initrode.example",
        "email_verified": False,
        "scope": "email profile",
        "client_id": tokens.client_id,
    }
    # The body is signed and carries the customer as before: a backend checking either
    # way keeps working.
    [received] = backend.received
    assert received.headers["frontdesk-signature"].startswith("v1=")
    assert received.json()["customer"]["subject"] == "dev:ada@initrode.example"


async def test_the_token_has_a_short_life_a_key_id_and_a_fresh_jti_per_call(
    serve: Serve, backend: ScriptedBackend
) -> None:
    backend.routes["/api"] = _echo_ok
    served = await serve(company(TENANT, jwt_tool("points", backend.url("/api")), signin=True))
    tokens = await flows.obtain_tokens(served.client, TENANT)
    for _ in range(2):
        await call_tool(served.client, TENANT, "points", token=tokens.access)
    first, second = (_bearer(received.headers) for received in backend.received)
    header = jwt.get_unverified_header(first)
    assert header["typ"] == "JWT"
    assert header["alg"] == "ES256"
    assert header["kid"] == jwt.get_unverified_header(second)["kid"]
    one, two = (jwt.decode(token, options={"verify_signature": False}) for token in (first, second))
    assert one["jti"] != two["jti"]
    assert one["exp"] - one["iat"] == LIFETIME_SECONDS <= 300


async def test_without_the_email_scope_the_token_names_no_email(
    serve: Serve, backend: ScriptedBackend
) -> None:
    backend.routes["/api"] = _echo_ok
    served = await serve(company(TENANT, jwt_tool("points", backend.url("/api")), signin=True))
    tokens = await flows.obtain_tokens(served.client, TENANT, scope="profile")
    await call_tool(served.client, TENANT, "points", token=tokens.access)
    claims = jwt.decode(_bearer(backend.received[0].headers), options={"verify_signature": False})
    assert "email" not in claims
    assert "email_verified" not in claims
    assert claims["scope"] == "profile"


async def test_the_audience_is_the_one_the_tool_names(
    serve: Serve, backend: ScriptedBackend
) -> None:
    backend.routes["/api"] = _echo_ok
    tool = jwt_tool("points", backend.url("/api"), audience="https://api.initrode.example")
    served = await serve(company(TENANT, tool, signin=True))
    tokens = await flows.obtain_tokens(served.client, TENANT)
    await call_tool(served.client, TENANT, "points", token=tokens.access)
    claims = jwt.decode(_bearer(backend.received[0].headers), options={"verify_signature": False})
    assert claims["aud"] == "https://api.initrode.example"


async def test_a_guest_call_and_a_company_that_did_not_choose_it_carry_no_token(
    serve: Serve, backend: ScriptedBackend
) -> None:
    backend.routes["/api"] = _echo_ok
    public = jwt_tool("lookup", backend.url("/api"))
    public["access"] = "public"
    plain = http_tool("points", backend.url("/api"), access="personal")
    served = await serve(company(TENANT, public, plain, signin=True))
    await call_tool(served.client, TENANT, "lookup")
    tokens = await flows.obtain_tokens(served.client, TENANT)
    await call_tool(served.client, TENANT, "points", token=tokens.access)
    await call_tool(served.client, TENANT, "lookup", token=tokens.access)
    guest, signed_body, chosen = backend.received
    assert "authorization" not in guest.headers
    assert "authorization" not in signed_body.headers
    # A public tool called by a signed-in customer acts for them (interface 5.5): the API
    # is told who they are.
    assert _bearer(chosen.headers)


async def test_the_example_verifies_a_token_against_a_live_instance_and_refuses_another_audience(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """examples/verify_identity.py as a company would run it, in a process of its own."""
    backend.routes["/api"] = _echo_ok
    url = backend.url("/api")
    served = await serve(company(TENANT, jwt_tool("points", url), signin=True))
    tokens = await flows.obtain_tokens(served.client, TENANT)
    await call_tool(served.client, TENANT, "points", token=tokens.access)
    token = _bearer(backend.received[0].headers)
    async with listening_on_loopback(served.app) as listening:
        jwks_url = f"{listening}/v1/{TENANT}/oauth/jwks.json"
        accepted = await _run_example(ISSUER, url, token, jwks_url)
        refused = await _run_example(ISSUER, "https://another.example", token, jwks_url)
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["sub"] == "dev:peter@initech.example"
    assert refused.returncode == 1
    assert "audience" in refused.stderr.lower()


async def _run_example(*arguments: str) -> subprocess.CompletedProcess[str]:
    with anyio.fail_after(DEADLINE):
        result = await anyio.run_process([sys.executable, str(EXAMPLE), *arguments], check=False)
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def _echo_ok(handler: Handler) -> None:
    handler.send(200, b'{"text": "ok"}')


def _bearer(headers: dict[str, str]) -> str:
    scheme, _, token = headers["authorization"].partition(" ")
    assert scheme == "Bearer"
    return token
