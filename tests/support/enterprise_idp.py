"""A test enterprise identity provider for enterprise-managed sign-in: real keys made with
joserfc, its JWKS served over real HTTPS (tests/support/https_documents.py), and Identity
Assertion JWT Authorization Grants (ID-JAG) signed as an enterprise IdP signs them
(draft-ietf-oauth-identity-assertion-authz-grant section 3.1; the MCP ``ext-auth``
extension "Enterprise-Managed Authorization", 4.3).

Each assertion is valid unless a test changes one thing: a claim (``None`` removes it), the
header, or the key that signs it.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, Key, KeyParameters, RSAKey

from tests.support.https_documents import HttpsDocuments

ISSUER = "https://idp.enterprise.test"
JWKS_PATH = "/enterprise/jwks.json"
TYP = "oauth-id-jag+jwt"


class EnterpriseIdp:
    def __init__(self, documents: HttpsDocuments, issuer: str = ISSUER) -> None:
        self.documents = documents
        self.issuer = issuer
        self.key = new_key("ES256", "es-1")
        self.published: list[Key] = [self.key]
        self.publish()

    @property
    def jwks_uri(self) -> str:
        return self.documents.url(JWKS_PATH)

    def publish(self, *keys: Key) -> None:
        """Serve these public keys (the current set when none are given) as the JWKS."""
        if keys:
            self.published = list(keys)
        public = [key.as_dict(private=False) for key in self.published]
        self.documents.serve_json(JWKS_PATH, {"keys": public})

    def fetches(self) -> int:
        return self.documents.requests(JWKS_PATH)

    def provider(self, **changes: Any) -> dict[str, Any]:
        """This issuer as a company's ``signin.enterprise_providers`` entry."""
        return {"issuer": self.issuer, "jwks_uri": self.jwks_uri, **changes}

    def assertion(
        self,
        *,
        client_id: str,
        audience: str,
        resource: str,
        key: Key | None = None,
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """A signed ID-JAG for ``client_id`` at the authorization server ``audience``."""
        signer = key or self.key
        now = int(time.time())
        payload: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "iss": self.issuer,
            "sub": "U019488227",
            "email": "pat@enterprise.test",
            "email_verified": True,
            "aud": audience,
            "resource": resource,
            "client_id": client_id,
            "exp": now + 300,
            "iat": now,
            "scope": "profile email",
        }
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        algorithm = algorithm_of(signer)
        protected: dict[str, Any] = {"typ": TYP, "alg": algorithm, "kid": signer.kid}
        protected.update(header or {})
        protected = {name: value for name, value in protected.items() if value is not None}
        return jwt.encode(protected, payload, signer, algorithms=[algorithm])


def new_key(algorithm: str, kid: str) -> Key:
    parameters: KeyParameters = {"kid": kid, "alg": algorithm, "use": "sig"}
    if algorithm.startswith("ES"):
        return ECKey.generate_key("P-256", parameters=parameters, private=True)
    return RSAKey.generate_key(2048, parameters=parameters, private=True)


def algorithm_of(key: Key) -> str:
    return str(key.alg) if key.alg else "ES256"
