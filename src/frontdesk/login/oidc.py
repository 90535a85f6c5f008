"""The ``oidc`` login: OpenID Connect to the company's identity provider.

Authorization code flow with PKCE (S256) and a nonce, both derived from the sign-in's
server-side secret; the id token is checked in full: signature against the provider's
JWKS, issuer, audience, expiry, issue time and nonce. Provider metadata and keys are
cached per issuer; an unknown key id triggers one refetch of the keys (key rotation).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard
from urllib.parse import urlencode

import httpx
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from frontdesk.login.connector import Identity, LoginAttempt, LoginFailed, ProviderUnavailable
from frontdesk.signing import b64encode

METADATA_TTL_SECONDS = 3600
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]


@dataclass(frozen=True, slots=True)
class OidcSettings:
    issuer: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]


@dataclass(slots=True)
class _ProviderMetadata:
    authorization_endpoint: str
    token_endpoint: str
    keys: KeySet
    fetched_at: float


def _derive(secret: bytes, label: str) -> str:
    return b64encode(hmac.new(secret, label.encode(), hashlib.sha256).digest())


def pkce_verifier(attempt: LoginAttempt) -> str:
    return _derive(attempt.secret, "oidc-pkce-verifier")


def nonce(attempt: LoginAttempt) -> str:
    return _derive(attempt.secret, "oidc-nonce")


class OidcLogin:
    def __init__(self, settings: OidcSettings, http: httpx.AsyncClient) -> None:
        self._settings = settings
        self._http = http
        self._metadata: _ProviderMetadata | None = None

    async def begin(self, attempt: LoginAttempt) -> str:
        metadata = await self._provider()
        challenge = b64encode(hashlib.sha256(pkce_verifier(attempt).encode()).digest())
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self._settings.client_id,
                "redirect_uri": attempt.callback_url,
                "scope": " ".join(self._settings.scopes),
                "state": attempt.state,
                "nonce": nonce(attempt),
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            }
        )
        separator = "&" if "?" in metadata.authorization_endpoint else "?"
        return f"{metadata.authorization_endpoint}{separator}{query}"

    async def complete(self, attempt: LoginAttempt, params: Mapping[str, str]) -> Identity:
        if "error" in params:
            raise LoginFailed("The sign-in was cancelled or refused.")
        code = params.get("code")
        if not code:
            raise LoginFailed("The sign-in did not come back with a code.")
        # RFC 9207: when the provider names itself, it must be the one we sent the customer to.
        issuer = params.get("iss")
        if issuer is not None and issuer != self._settings.issuer:
            raise LoginFailed("The sign-in came back from an unexpected provider.")
        metadata = await self._provider()
        try:
            response = await self._http.post(
                metadata.token_endpoint,
                auth=(self._settings.client_id, self._settings.client_secret),
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": attempt.callback_url,
                    "code_verifier": pkce_verifier(attempt),
                },
                headers={"accept": "application/json"},
            )
        except httpx.HTTPError as error:
            raise ProviderUnavailable("The company's sign-in could not be reached.") from error
        if response.status_code != 200:
            raise LoginFailed("The company's sign-in did not accept this sign-in.")
        try:
            id_token = response.json()["id_token"]
        except (ValueError, KeyError, TypeError):
            raise LoginFailed("The company's sign-in sent no identity.") from None
        return identity_from(await self._verify(id_token, nonce(attempt)))

    async def _verify(self, id_token: str, expected_nonce: str) -> dict[str, Any]:
        metadata = await self._provider()
        try:
            token = self._decode(id_token, metadata.keys)
        except JoseError:
            # Perhaps the provider rotated its keys: fetch them once more and retry.
            metadata = await self._provider(refresh=True)
            try:
                token = self._decode(id_token, metadata.keys)
            except JoseError:
                raise LoginFailed("The identity from the company's sign-in is not valid.") from None
        registry = jwt.JWTClaimsRegistry(
            leeway=60,
            iss={"essential": True, "value": self._settings.issuer},
            aud={"essential": True, "value": self._settings.client_id},
            sub={"essential": True},
            exp={"essential": True},
            iat={"essential": True},
            nonce={"essential": True, "value": expected_nonce},
        )
        try:
            registry.validate(token.claims)
        except JoseError:
            raise LoginFailed("The identity from the company's sign-in is not valid.") from None
        return dict(token.claims)

    @staticmethod
    def _decode(id_token: str, keys: KeySet) -> jwt.Token:
        return jwt.decode(id_token, keys, algorithms=ALGORITHMS)

    async def _provider(self, refresh: bool = False) -> _ProviderMetadata:
        cached = self._metadata
        if cached and not refresh and time.monotonic() - cached.fetched_at < METADATA_TTL_SECONDS:
            return cached
        issuer = self._settings.issuer.rstrip("/")
        try:
            discovery = (
                (await self._http.get(f"{issuer}/.well-known/openid-configuration"))
                .raise_for_status()
                .json()
            )
            if discovery.get("issuer") != self._settings.issuer:
                raise ProviderUnavailable("The company's sign-in names a different issuer.")
            jwks = (await self._http.get(discovery["jwks_uri"])).raise_for_status().json()
            self._metadata = _ProviderMetadata(
                authorization_endpoint=discovery["authorization_endpoint"],
                token_endpoint=discovery["token_endpoint"],
                keys=KeySet.import_key_set(jwks),
                fetched_at=time.monotonic(),
            )
        except (httpx.HTTPError, ValueError, KeyError, TypeError, JoseError) as error:
            raise ProviderUnavailable("The company's sign-in could not be reached.") from error
        return self._metadata


# OpenID Connect Core 1.0, section 2: sub is at most 255 ASCII characters; the store keeps
# it in a column of that size (and PostgreSQL refuses a NUL in text).
MAX_SUBJECT = 255
MAX_EMAIL = 320  # RFC 5321: 64 for the local part, @, 255 for the domain
MAX_NAME = 200
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


def identity_from(claims: dict[str, Any]) -> Identity:
    """The customer an ID token's claims name; LoginFailed for a subject Frontdesk cannot
    keep, so that an odd provider gives a clean sign-in error, never a server error. An email
    or name that does not fit is left out rather than refusing the customer."""
    subject = claims.get("sub")
    if (
        not isinstance(subject, str)
        or not 0 < len(subject) <= MAX_SUBJECT
        or not subject.isascii()
        or _UNPRINTABLE.search(subject)
    ):
        raise LoginFailed("The company's sign-in sent an identity Frontdesk cannot use.")
    email = claims.get("email")
    name = claims.get("name")
    return Identity(
        subject=subject,
        email=email if _printable(email) and len(email) <= MAX_EMAIL else None,
        # A display name: cut rather than lost.
        name=name[:MAX_NAME] if _printable(name) else None,
    )


def _printable(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value) and _UNPRINTABLE.search(value) is None
