"""Verify who is calling your API: the JWT Frontdesk sends with a signed-in customer's call.

A tool whose company chose signed identity (an imported OpenAPI operation, or an ``http``
tool with ``identity: jwt``) calls your API with ``Authorization: Bearer <JWT>``, signed
with your company's own key. Any JWT library checks it against the keys your company's
authorization server publishes (its ``jwks_uri``, ``{issuer}/jwks.json``); this is PyJWT::

    pip install "pyjwt[crypto]"
    python examples/verify_identity.py ISSUER AUDIENCE TOKEN [JWKS_URL]

e.g. ``ISSUER`` ``https://frontdesk.example.com/v1/acme/oauth`` and ``AUDIENCE`` your API's
base URL (or the ``audience`` the tool names). It prints the token's claims as JSON, or why
it was refused (exit 1). The claims: ``sub`` (the customer), ``scope``, ``client_id`` (the
assistant), ``jti``, ``iat``, ``exp`` (two minutes after), and ``email`` with
``email_verified`` only when the customer shared it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import jwt

# Frontdesk signs with ES256, or EdDSA when the company chose it; never anything else.
ALGORITHMS = ["ES256", "EdDSA"]


class IdentityVerifier:
    """Checks tokens of one company for one API. Keep one for the life of your process: it
    keeps the keys for five minutes, and fetches them again when it meets a new key id (a
    rotation)."""

    def __init__(self, issuer: str, audience: str, jwks_url: str | None = None) -> None:
        self.issuer = issuer
        self.audience = audience
        self.keys = jwt.PyJWKClient(jwks_url or f"{issuer}/jwks.json", lifespan=300, timeout=5)

    def verify(self, authorization: str) -> dict[str, Any]:
        """The claims of a valid ``Authorization: Bearer`` value; jwt.PyJWTError otherwise."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise jwt.InvalidTokenError("no bearer token")
        key = self.keys.get_signing_key_from_jwt(token)
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=ALGORITHMS,
            audience=self.audience,
            issuer=self.issuer,
            options={"require": ["iss", "aud", "sub", "exp", "iat", "jti"]},
        )
        return claims


def main(arguments: list[str]) -> int:
    if len(arguments) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    issuer, audience, token, *jwks_url = arguments
    verifier = IdentityVerifier(issuer, audience, jwks_url[0] if jwks_url else None)
    try:
        claims = verifier.verify(f"Bearer {token}")
    except jwt.PyJWTError as error:
        print(f"refused: {error}", file=sys.stderr)
        return 1
    print(json.dumps(claims, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
