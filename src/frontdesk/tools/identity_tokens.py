"""The signed identity a company's API receives: a short JWT naming the customer, signed
with the company's own key, whose public half its authorization server publishes (its
``jwks_uri``), so any API gateway can check a call with a standard JWT library and no
Frontdesk code.

A token (RFC 7519) has ``typ`` ``JWT`` and the signing key's ``kid`` in its header, and the
claims ``iss`` (the company's issuer), ``aud`` (the API it is for), ``sub`` (the customer),
``email`` and ``email_verified`` only when the customer granted the email scope, ``scope``,
``client_id`` (the assistant's client), ``jti`` (random, for replay checks), ``iat`` and
``exp`` (``LIFETIME_SECONDS`` later: a token outlives its call by little).

Keys (store.signing_keys): ES256 by default, EdDSA (Ed25519) when the company chooses it at
rotation. A company's first key is made when first needed (its first signed call or JWKS
request); instances that race to make it meet on a unique index and all use the winner.
``frontdesk keys rotate-signing`` makes a new key that signs from then on; the old one stays
published for ``OVERLAP``, so every token it signed still verifies. The private half is
kept sealed under FRONTDESK_DATA_KEYS (secret_box), bound to its company and kid.

Each worker keeps a company's keys for FRONTDESK_COMPANY_CACHE_SECONDS, as it keeps the
company: a rotation reaches every instance within that bound. joserfc, and cryptography with
it, is loaded with the first key used, not by a worker whose companies never need one.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import orjson

from frontdesk.config import Settings
from frontdesk.domain import Customer
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.signing_keys import KeyAlreadyActive, SigningKeyRepository, StoredSigningKey

if TYPE_CHECKING:
    from joserfc.jwk import ECKey, OKPKey

ES256 = "ES256"
EDDSA = "EdDSA"
ALGORITHMS = (ES256, EDDSA)
DEFAULT_ALGORITHM = ES256
# A token is minted for one outbound call, bounded far below this; the margin is for the
# API's clock, which may run a little ahead of ours.
LIFETIME_SECONDS = 120
# How long a retired key stays published: far longer than any token it signed lives and
# than any verifier should keep a key set, so no token in flight fails at a rotation.
OVERLAP = timedelta(hours=24)
# How long a verifier may keep the key set (Cache-Control max-age of the jwks_uri): a new
# key is met by its kid, which a verifier that does not know it fetches again (PyJWT's
# PyJWKClient does), so a short bound costs little.
JWKS_MAX_AGE_SECONDS = 300
# Companies whose keys a worker keeps at once; the least recently used make way.
MAX_CACHED_COMPANIES = 10_000


class UnknownAlgorithm(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class _Signer:
    kid: str
    algorithm: str
    key: ECKey | OKPKey


@dataclass(frozen=True, slots=True)
class _CompanyKeys:
    expires: float
    # The key that signs (its private half still sealed: opened when first used, and
    # the JWKS is served without it).
    active: StoredSigningKey
    # The JWKS document, serialized once per read: every request for it answers these bytes.
    jwks: bytes


@dataclass(frozen=True, slots=True)
class RotatedKey:
    kid: str
    algorithm: str
    # Whether a key was signing before (and is now published for OVERLAP only).
    retired_previous: bool


def _associated(tenant_key: str, kid: str) -> str:
    # Sealed for one company and one key: a private half copied to another row fails to open.
    return f"frontdesk/signing-key\x00{tenant_key}\x00{kid}"


def _generate(algorithm: str) -> ECKey | OKPKey:
    from joserfc.jwk import ECKey, OKPKey

    if algorithm == ES256:
        return ECKey.generate_key("P-256", private=True, auto_kid=False)
    if algorithm == EDDSA:
        return OKPKey.generate_key("Ed25519", private=True, auto_kid=False)
    raise UnknownAlgorithm(f"unknown signing algorithm {algorithm!r}; one of {ALGORITHMS}")


def _import_private(algorithm: str, jwk: dict[str, Any]) -> ECKey | OKPKey:
    from joserfc.jwk import ECKey, OKPKey

    if algorithm == EDDSA:
        return OKPKey.import_key(jwk)
    return ECKey.import_key(jwk)


class IdentityTokens:
    def __init__(
        self, repository: SigningKeyRepository, box: SecretBox, settings: Settings
    ) -> None:
        self._repository = repository
        self._box = box
        self._settings = settings
        self._ttl = settings.company_cache_seconds
        self._cache: OrderedDict[str, _CompanyKeys] = OrderedDict()
        self._loading: dict[str, asyncio.Future[_CompanyKeys]] = {}
        # Each company's opened signing key, reused while it is the active one.
        self._signers: OrderedDict[str, _Signer] = OrderedDict()

    async def mint(
        self,
        tenant_key: str,
        audience: str,
        customer: Customer,
        client_id: str | None,
        scope: frozenset[str],
    ) -> str:
        """A JWT naming ``customer`` to the API ``audience``, signed with the company's key."""
        from joserfc import jwt

        signer = self._signer((await self._keys(tenant_key)).active)
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self._settings.issuer(tenant_key),
            "aud": audience,
            "sub": customer.subject,
            "scope": " ".join(sorted(scope)),
            "jti": secrets.token_urlsafe(16),
            "iat": now,
            "exp": now + LIFETIME_SECONDS,
        }
        # Only what the customer agreed to share (the Customer carries no email without the
        # email scope; checked here too, as the scope is what was granted).
        if customer.email is not None and "email" in scope:
            claims["email"] = customer.email
            claims["email_verified"] = customer.email_verified
        if client_id is not None:
            claims["client_id"] = client_id
        header = {"typ": "JWT", "alg": signer.algorithm, "kid": signer.kid}
        with warnings.catch_warnings():
            # joserfc warns that RFC 9864 deprecates "EdDSA" for "Ed25519"; the verifiers
            # companies run (PyJWT, gateways) know only "EdDSA" yet.
            warnings.simplefilter("ignore", UserWarning)
            return jwt.encode(header, claims, signer.key, algorithms=[signer.algorithm])

    async def jwks(self, tenant_key: str) -> bytes:
        """The company's published key set (RFC 7517 section 5) as JSON bytes."""
        return (await self._keys(tenant_key)).jwks

    async def rotate(
        self, tenant_key: str, algorithm: str = DEFAULT_ALGORITHM, now: datetime | None = None
    ) -> RotatedKey:
        """A new key that signs from now on; the one signing until now stays published for
        OVERLAP. Another rotation committing at the same moment wins: this one then fails
        with KeyAlreadyActive and changes nothing."""
        moment = now or datetime.now(UTC)
        key = self._new_key(tenant_key, algorithm, moment)
        retired = await self._repository.rotate(key, moment, OVERLAP)
        self._cache.pop(tenant_key, None)
        return RotatedKey(key.kid, algorithm, retired > 0)

    def _new_key(self, tenant_key: str, algorithm: str, now: datetime) -> StoredSigningKey:
        private = _generate(algorithm)
        # RFC 7638 thumbprint: unique without coordination, and the same for the same key.
        kid = private.thumbprint()
        public = {**private.as_dict(private=False), "kid": kid, "alg": algorithm, "use": "sig"}
        sealed = self._box.seal(
            orjson.dumps(private.as_dict(private=True)).decode(), _associated(tenant_key, kid)
        )
        return StoredSigningKey(kid, tenant_key, algorithm, public, sealed, now, None)

    async def _keys(self, tenant_key: str) -> _CompanyKeys:
        cached = self._cache.get(tenant_key)
        if cached is not None and cached.expires > time.monotonic():
            return cached
        # One read per company at a time, as the registry does for companies.
        loading = self._loading.get(tenant_key)
        if loading is None:
            loading = self._loading[tenant_key] = asyncio.ensure_future(self._load(tenant_key))
            loading.add_done_callback(lambda _done: self._loading.pop(tenant_key, None))
        # Shielded: a request that goes away does not cancel the read others wait for (and
        # shield marks a failure as retrieved when nobody is left waiting for it).
        return await asyncio.shield(loading)

    async def _load(self, tenant_key: str) -> _CompanyKeys:
        now = datetime.now(UTC)
        published = await self._repository.published(tenant_key, now, OVERLAP)
        if not any(key.retired_at is None for key in published):
            # Another instance may make it first: its key is read below.
            with contextlib.suppress(KeyAlreadyActive):
                await self._repository.add_first(self._new_key(tenant_key, DEFAULT_ALGORITHM, now))
            published = await self._repository.published(tenant_key, now, OVERLAP)
        # The active key comes first; should a rotation have retired it between the two
        # reads, the one it retired, which verifies for OVERLAP yet.
        active = next((key for key in published if key.retired_at is None), published[0])
        keys = _CompanyKeys(time.monotonic() + self._ttl, active, _key_set(published))
        _remember(self._cache, tenant_key, keys)
        return keys

    def _signer(self, active: StoredSigningKey) -> _Signer:
        """The active key opened: once per key, not at every call."""
        signer = self._signers.get(active.tenant_key)
        if signer is None or signer.kid != active.kid:
            opened = self._box.open(
                active.private_sealed, _associated(active.tenant_key, active.kid)
            )
            key = _import_private(active.algorithm, orjson.loads(opened))
            signer = _Signer(active.kid, active.algorithm, key)
        _remember(self._signers, active.tenant_key, signer)
        return signer


def _remember(cache: OrderedDict[str, Any], tenant_key: str, value: Any) -> None:
    cache[tenant_key] = value
    cache.move_to_end(tenant_key)
    while len(cache) > MAX_CACHED_COMPANIES:
        cache.popitem(last=False)


def _key_set(published: Sequence[StoredSigningKey]) -> bytes:
    return orjson.dumps({"keys": [key.public_jwk for key in published]})
