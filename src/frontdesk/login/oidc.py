"""The ``oidc`` login: OpenID Connect to the company's identity provider.

Authorization code flow with PKCE (S256) and a nonce, both derived from the sign-in's
server-side secret; the id token is checked in full: signature against the provider's
JWKS, issuer, audience, expiry, issue time and nonce. Provider metadata and keys are
cached per issuer; an unknown key id triggers one refetch of the keys (key rotation), at
most once every KEY_REFRESH_SECONDS.

The protocol is Authlib's: its ``AsyncOAuth2Client`` builds the authorization URL (PKCE,
the nonce) and makes the code exchange (client_secret_basic), and its ``CodeIDToken`` checks
the id token's claims once joserfc has checked its signature (docs/decisions/oidc-client.md).
Its client opens no connection of its own: its transport is the outbound policy's
(outbound.policy_transport).

Every call to the provider goes through the outbound policy (frontdesk.outbound.policy):
the discovery document names the key and token endpoints, so without it a provider could
send the client secret, the code and the PKCE verifier to an internal address. Each step
(discovery with keys; the code exchange) has one deadline, each answer a byte cap; a
failed discovery is remembered for FAILURE_TTL_SECONDS, so that consents arriving while the
provider is down or misbehaving do not each call it again. Whatever goes wrong is a
ProviderUnavailable (the "try again later" sign-in error), logged with its reason and never
with a secret, code or token.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

import httpx
import orjson
import structlog
from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from frontdesk import __version__
from frontdesk.login.connector import Identity, LoginAttempt, LoginFailed, ProviderUnavailable
from frontdesk.outbound.policy import OutboundFailure, OutboundPolicy
from frontdesk.outbound.policy_transport import DEADLINE, PolicyTransport
from frontdesk.sealing.signing import b64encode

log = structlog.get_logger(__name__)

METADATA_TTL_SECONDS = 3600
# A failed discovery (or key refetch) is not retried for this long: the provider is not
# called more than once per window however many customers try to sign in meanwhile.
FAILURE_TTL_SECONDS = 30.0
# An id token with an unknown key id refetches the keys, but not more often than this: a
# stream of forged tokens cannot turn into a stream of calls to the provider.
KEY_REFRESH_SECONDS = 30.0
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]
UNREACHABLE = "The company's sign-in could not be reached."
NOT_ACCEPTED = "The company's sign-in did not accept this sign-in."
NO_IDENTITY = "The company's sign-in sent no identity."
NOT_VALID = "The identity from the company's sign-in is not valid."
# OpenID Connect Core 1.0, 3.1.3.7 leaves the clock skew allowed on exp and iat to us.
ID_TOKEN_LEEWAY_SECONDS = 60
HEADERS = {
    "Accept": "application/json",
    # The one coding decoded, within the cap (outbound_policy.read_capped).
    "Accept-Encoding": "gzip",
    "User-Agent": f"Frontdesk/{__version__} (OpenID Connect relying party)",
}


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
    def __init__(
        self,
        settings: OidcSettings,
        http: httpx.AsyncClient,
        policy: OutboundPolicy,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._http = http
        self._policy = policy
        self._clock = clock
        self._metadata: _ProviderMetadata | None = None
        # One fetch of the metadata at a time: callers that waited find its outcome.
        self._fetching = asyncio.Lock()
        self._failed_until = 0.0
        self._refreshed_at = float("-inf")

    async def begin(self, attempt: LoginAttempt) -> str:
        metadata = await self._provider()
        async with self._client() as client:
            url, _ = client.create_authorization_url(
                metadata.authorization_endpoint,
                state=attempt.state,
                code_verifier=pkce_verifier(attempt),
                redirect_uri=attempt.callback_url,
                nonce=nonce(attempt),
            )
        return str(url)

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
        async with self._client() as client:
            client.register_compliance_hook("access_token_response", self._judge_token_answer)
            try:
                answer = await client.fetch_token(
                    metadata.token_endpoint,
                    grant_type="authorization_code",
                    code=code,
                    redirect_uri=attempt.callback_url,
                    code_verifier=pkce_verifier(attempt),
                )
            except OutboundFailure as failure:
                self._log_unreachable("token", str(failure))
                raise ProviderUnavailable(UNREACHABLE) from None
            except OAuthError:
                # A JSON answer naming an OAuth error (RFC 6749 5.2), even with a 200.
                raise LoginFailed(NOT_ACCEPTED) from None
            except UnicodeEncodeError:
                # Authlib's Basic header is Latin-1 (RFC 7617 leaves the charset open): a
                # secret outside it is the company's setup to fix, not a server error.
                self._log_unreachable("token", "the client secret is not Latin-1 text")
                raise ProviderUnavailable(UNREACHABLE) from None
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise LoginFailed(NO_IDENTITY)
        return identity_from(await self._verify(id_token, nonce(attempt)))

    def _judge_token_answer(self, response: httpx.Response) -> httpx.Response:
        """Authlib's hook on the token endpoint's answer, before it reads it as a token."""
        # RFC 9110 15.6, RFC 6585 4: the provider says to come back later.
        if response.status_code >= 500 or response.status_code in (408, 429):
            reason = f"the token endpoint answered HTTP {response.status_code}"
            self._log_unreachable("token", reason)
            raise ProviderUnavailable(UNREACHABLE)
        if response.status_code != 200:
            raise LoginFailed(NOT_ACCEPTED)
        if _json_object(response.content) is None:
            raise LoginFailed(NO_IDENTITY)
        return response

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
                raise LoginFailed(NOT_VALID) from None
        # OpenID Connect Core 1.0, 3.1.3.7: iss, aud (and azp when several audiences), exp,
        # iat and the nonce; sub must be there (its form is identity_from's).
        claims = CodeIDToken(
            token.claims,
            token.header,
            options={
                "iss": {"essential": True, "value": self._settings.issuer},
                "aud": {"essential": True, "value": self._settings.client_id},
                "nonce": {"essential": True, "value": expected_nonce},
            },
            params={"nonce": expected_nonce, "client_id": self._settings.client_id},
        )
        try:
            claims.validate(leeway=ID_TOKEN_LEEWAY_SECONDS)
        except JoseError:
            raise LoginFailed(NOT_VALID) from None
        return dict(token.claims)

    @staticmethod
    def _decode(id_token: str, keys: KeySet) -> jwt.Token:
        return jwt.decode(id_token, keys, algorithms=ALGORITHMS)

    def _client(self) -> AsyncOAuth2Client:
        """Authlib's client for one step, sending through the outbound policy. One a step:
        the client keeps the token it fetched, which no other sign-in may see."""
        return AsyncOAuth2Client(
            client_id=self._settings.client_id,
            client_secret=self._settings.client_secret,
            scope=" ".join(self._settings.scopes),
            code_challenge_method="S256",
            transport=PolicyTransport(self._http, self._policy),
            headers=HEADERS,
            follow_redirects=False,
            trust_env=False,
        )

    async def _provider(self, refresh: bool = False) -> _ProviderMetadata:
        asked_at = self._clock()
        async with self._fetching:
            now = self._clock()
            cached = self._metadata
            if cached is not None and now - cached.fetched_at < METADATA_TTL_SECONDS:
                # A refresh is skipped when another caller fetched while this one waited,
                # or when the last refresh is too recent (KEY_REFRESH_SECONDS).
                if not refresh or cached.fetched_at >= asked_at:
                    return cached
                if now < self._refreshed_at + KEY_REFRESH_SECONDS:
                    return cached
                self._refreshed_at = now
            if now < self._failed_until:
                raise ProviderUnavailable(UNREACHABLE)
            try:
                self._metadata = await self._fetch_metadata()
            except ProviderUnavailable:
                self._failed_until = self._clock() + FAILURE_TTL_SECONDS
                raise
            return self._metadata

    async def _fetch_metadata(self) -> _ProviderMetadata:
        # One deadline for discovery and keys together: the sign-in page waits on both.
        deadline = self._policy.deadline()
        issuer = self._settings.issuer.rstrip("/")
        async with self._client() as client:
            discovery = await self._document(
                client, "discovery", f"{issuer}/.well-known/openid-configuration", deadline
            )
            # OpenID Connect Discovery 1.0, section 4.3: the issuer must be exactly ours.
            if discovery.get("issuer") != self._settings.issuer:
                self._log_unreachable("discovery", "the document names a different issuer")
                raise ProviderUnavailable("The company's sign-in names a different issuer.")
            endpoints: dict[str, str] = {}
            for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                value = discovery.get(name)
                problem = (
                    "missing" if not isinstance(value, str) else self._policy.url_problem(value)
                )
                if not isinstance(value, str) or problem is not None:
                    self._log_unreachable("discovery", f"{name}: {problem}")
                    raise ProviderUnavailable(UNREACHABLE)
                endpoints[name] = value
            jwks = await self._document(client, "keys", endpoints["jwks_uri"], deadline)
        try:
            keys = KeySet.import_key_set(jwks)  # type: ignore[arg-type]
        except (JoseError, ValueError, KeyError, TypeError) as error:
            self._log_unreachable("keys", f"the key set is not usable ({type(error).__name__})")
            raise ProviderUnavailable(UNREACHABLE) from None
        return _ProviderMetadata(
            authorization_endpoint=endpoints["authorization_endpoint"],
            token_endpoint=endpoints["token_endpoint"],
            keys=keys,
            fetched_at=self._clock(),
        )

    async def _document(
        self, client: AsyncOAuth2Client, what: str, url: str, deadline: float
    ) -> dict[str, Any]:
        """The JSON object at ``url``: the discovery document or the key set."""
        try:
            # withhold_token: these calls carry no token (Authlib's client asks for one).
            response = await client.request(
                "GET", url, withhold_token=True, extensions={DEADLINE: deadline}
            )
        except OutboundFailure as failure:
            self._log_unreachable(what, str(failure))
            raise ProviderUnavailable(UNREACHABLE) from None
        if response.status_code != 200:
            self._log_unreachable(what, f"the provider answered HTTP {response.status_code}")
            raise ProviderUnavailable(UNREACHABLE)
        document = _json_object(response.content)
        if document is None:
            self._log_unreachable(what, "the answer is not a JSON object")
            raise ProviderUnavailable(UNREACHABLE)
        return document

    def _log_unreachable(self, what: str, reason: str) -> None:
        # The reason names a host, an address, a status or a size: never a header or body.
        log.warning(
            "login_provider_unavailable", issuer=self._settings.issuer, call=what, reason=reason
        )


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return document if isinstance(document, dict) else None


# OpenID Connect Core 1.0, section 2: sub is at most 255 ASCII characters; the store keeps
# it in a column of that size (and PostgreSQL refuses a NUL in text).
MAX_SUBJECT = 255
MAX_EMAIL = 320  # RFC 5321: 64 for the local part, @, 255 for the domain
MAX_NAME = 200
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")
# What no stored or forwarded text may hold: control characters (C0, DEL and C1), which
# PostgreSQL refuses (NUL) or a backend may misread, and lone surrogates, which JSON's
# "\ud800" escape yields and no UTF-8 encoder (PostgreSQL's, a backend's) accepts.
_UNFIT = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def identity_from(claims: dict[str, Any]) -> Identity:
    """The customer an ID token's claims name; LoginFailed for a subject Frontdesk cannot
    keep, so that an odd provider gives a clean sign-in error, never a server error. An email
    or name that does not fit is left out rather than refusing the customer.

    The email counts as verified only when the token says ``email_verified: true`` (OpenID
    Connect Core 1.0, section 5.1): ``false``, a string, or no claim at all (Microsoft Entra
    ID sends none, and lets an administrator set any address) is unverified. The address is
    still kept and forwarded, marked so, rather than dropped."""
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
    kept_email = email if _printable(email) and len(email) <= MAX_EMAIL else None
    return Identity(
        subject=subject,
        email=kept_email,
        # A display name: cut rather than lost.
        name=name[:MAX_NAME] if _printable(name) else None,
        email_verified=kept_email is not None and claims.get("email_verified") is True,
    )


def _printable(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value) and _UNFIT.search(value) is None
