"""PKCE downgrade attempts (RFC 7636, OAuth 2.1: S256 only). Already proven elsewhere:
metadata lists only S256 (test_discovery), plain, s256, missing method and missing or
malformed challenge are 303 invalid_request (test_authorize), a missing verifier is
invalid_request and the challenge is not a verifier (test_token_endpoint). Here: none of
the downgrades ever reaches consent, and no verifier but the right one buys a token."""

from __future__ import annotations

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.adversarial.conftest import snapshot
from tests.oauth import flows

pytestmark = pytest.mark.anyio

DOWNGRADES: dict[str, list[tuple[str, str | None]]] = {
    "plain": [("code_challenge_method", "plain")],
    "plain-with-verifier-as-challenge": [
        ("code_challenge_method", "plain"),
        ("code_challenge", "v" * 43),
    ],
    "missing-method": [("code_challenge_method", None)],
    "missing-challenge": [("code_challenge", None)],
    "missing-both": [("code_challenge_method", None), ("code_challenge", None)],
    "empty-method": [("code_challenge_method", "")],
    "empty-challenge": [("code_challenge", "")],
    "lower-case-method": [("code_challenge_method", "s256")],
    "padded-method": [("code_challenge_method", "S256 ")],
    "method-list": [("code_challenge_method", "S256 plain")],
    "nul-method": [("code_challenge_method", "S256\x00")],
}


async def test_no_pkce_downgrade_reaches_consent(app: Frontdesk, client: httpx.AsyncClient) -> None:
    """Every PKCE downgrade is a 303 invalid_request: no consent, no cookie, no row."""
    client_id = await flows.register(client)
    before = await snapshot(app)
    for case, changes in DOWNGRADES.items():
        params: dict[str, str] = flows.authorize_params(client_id, flows.Pkce.new())
        for name, value in changes:
            if value is None:
                del params[name]
            else:
                params[name] = value
        response = await flows.authorize(client, params)
        assert flows.redirect_params(response)["error"] == "invalid_request", case
        assert "set-cookie" not in response.headers, case
    twice = [
        *flows.authorize_params(client_id, flows.Pkce.new()).items(),
        ("code_challenge_method", "plain"),
    ]
    response = await flows.authorize(client, twice)
    assert flows.redirect_params(response)["error"] == "invalid_request"
    assert "set-cookie" not in response.headers
    assert await snapshot(app) == before


async def test_no_verifier_but_the_right_one_buys_a_token(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """No verifier but the right one buys a token, and the failures write no row."""
    signed_in = await flows.sign_in(client)
    other = await flows.sign_in(client, client_id=signed_in.client_id)
    verifier = signed_in.pkce.verifier
    attempts: dict[str, list[tuple[str, str]]] = {
        "missing": [],
        "empty": [("code_verifier", "")],
        "challenge": [("code_verifier", signed_in.pkce.challenge)],
        "another-sign-ins": [("code_verifier", other.pkce.verifier)],
        "trailing-newline": [("code_verifier", verifier + "\n")],
        "trailing-space": [("code_verifier", verifier + " ")],
        "upper-cased": [("code_verifier", verifier.upper())],
        "one-short": [("code_verifier", verifier[:-1])],
        "nul-suffix": [("code_verifier", verifier + "\x00")],
        "as-challenge-param": [("code_challenge", verifier)],
        "twice": [("code_verifier", verifier), ("code_verifier", verifier)],
    }
    form = flows.code_form(signed_in)
    del form["code_verifier"]
    before = await snapshot(app)
    for case, extra in attempts.items():
        response = await flows.token_request(client, [*form.items(), *extra])
        assert response.status_code == 400, case
        assert response.json()["error"] in ("invalid_request", "invalid_grant"), case
    assert await snapshot(app) == before
    # Control: another sign-in's code with its own verifier is exchanged.
    assert (await flows.exchange(client, other)).status_code == 200
