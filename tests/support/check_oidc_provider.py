"""End-to-end proof that the OIDC test provider harness works.

Run with a Python that has httpx and joserfc::

    python tests/support/check_oidc_provider.py

Plays a confidential relying party through the authorization code flow with PKCE (S256),
verifies the id_token against the provider's JWKS and prints ``OK``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import sys
from pathlib import Path
from typing import Any

import httpx
from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oidc_provider import complete_login, run_oidc_provider

CLIENT_ID = "frontdesk-check"
CLIENT_SECRET = secrets.token_urlsafe(32)
# Port 9 (discard) on loopback: nothing listens there, and complete_login never requests it.
REDIRECT_URI = "http://127.0.0.1:9/callback"
SUB = "alice"
EMAIL = "alice@example.test"
NAME = "Alice Example"
ACCOUNT = {"sub": SUB, "email": EMAIL, "email_verified": True, "name": NAME}


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _expect(condition: bool, message: str) -> None:
    # Explicit checks rather than assert: they must still run under `python -O`.
    if not condition:
        raise SystemExit(f"FAIL: {message}")


async def _check(issuer: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        discovery: dict[str, Any] = (
            (await http.get(f"{issuer}/.well-known/openid-configuration")).raise_for_status().json()
        )
        _expect(discovery["issuer"] == issuer, f"discovery issuer {discovery['issuer']}")
        _expect("S256" in discovery["code_challenge_methods_supported"], "S256 not offered")

        verifier = secrets.token_urlsafe(48)
        state = secrets.token_urlsafe(16)
        nonce = secrets.token_urlsafe(16)
        authorize_url = str(
            httpx.URL(discovery["authorization_endpoint"]).copy_merge_params(
                {
                    "response_type": "code",
                    "client_id": CLIENT_ID,
                    "redirect_uri": REDIRECT_URI,
                    "scope": "openid email profile",
                    "state": state,
                    "nonce": nonce,
                    "code_challenge": _s256(verifier),
                    "code_challenge_method": "S256",
                }
            )
        )

    # A separate client for the "browser": its cookies are the provider session.
    async with httpx.AsyncClient(timeout=10) as browser:
        callback = httpx.URL(await complete_login(browser, authorize_url, login=SUB))
    _expect(str(callback.copy_with(query=None)) == REDIRECT_URI, f"callback {callback}")
    _expect(callback.params.get("state") == state, "state mismatch")
    _expect(callback.params.get("iss") == issuer, "iss missing from authorization response")
    code = callback.params.get("code")
    _expect(code is not None, f"no code in {callback}")

    async with httpx.AsyncClient(timeout=10) as http:
        token_response = await http.post(
            discovery["token_endpoint"],
            auth=httpx.BasicAuth(CLIENT_ID, CLIENT_SECRET),  # client_secret_basic
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": REDIRECT_URI,
                "code_verifier": verifier,
            },
        )
        _expect(token_response.is_success, f"token endpoint: {token_response.text}")
        tokens = token_response.json()
        jwks = (await http.get(discovery["jwks_uri"])).raise_for_status().json()

    key_set = KeySet.import_key_set(jwks)
    id_token = jwt.decode(tokens["id_token"], key_set, algorithms=["RS256"])
    _expect(id_token.header.get("alg") == "RS256", f"alg {id_token.header.get('alg')}")
    jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": CLIENT_ID},
        sub={"essential": True, "value": SUB},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
        email={"essential": True, "value": EMAIL},
        name={"essential": True, "value": NAME},
    ).validate(id_token.claims)
    _expect(id_token.claims.get("email_verified") is True, "email_verified")

    # The same verification must reject a token whose signature was tampered with.
    head, payload, signature = tokens["id_token"].split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    try:
        jwt.decode(f"{head}.{payload}.{flipped}", key_set, algorithms=["RS256"])
    except BadSignatureError:
        return
    raise SystemExit("FAIL: tampered id_token was accepted")


def main() -> None:
    client = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uris": [REDIRECT_URI],
        "token_endpoint_auth_method": "client_secret_basic",
    }
    with run_oidc_provider(clients=[client], accounts=[ACCOUNT]) as provider:
        asyncio.run(_check(provider.issuer))
    print("OK")


if __name__ == "__main__":
    main()
