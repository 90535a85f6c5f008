"""The public keys of the enterprise identity providers a company trusts for enterprise-managed
sign-in (companies.enterprise_providers): each provider's JWKS (RFC 7517 5), fetched through
the outbound policy and cached per JWKS URL.

The MCP ``ext-auth`` extension "Enterprise-Managed Authorization" (7.4.1) asks that keys be
fetched over authenticated TLS and rotated safely. So: a key set is fetched under the
outbound policy (addresses, no redirect, a deadline, a byte cap; https only in production),
kept for KEYS_TTL_SECONDS, and an assertion naming a ``kid`` the kept set lacks refetches it
once, such refetches not more often than KEY_REFRESH_SECONDS per URL, so that a stream of forged
assertions never becomes a stream of calls. A refetch replaces the set whole: a key the
provider withdrew is no longer accepted. A failed fetch is remembered for
FAILURE_TTL_SECONDS. Failures are logged with their reason (a host, a status, a size), never
with an assertion.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson
import structlog
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet

from frontdesk import __version__
from frontdesk.outbound.policy import OutboundFailure, OutboundPolicy

if TYPE_CHECKING:
    import httpx

log = structlog.get_logger(__name__)

KEYS_TTL_SECONDS = 3600.0
KEY_REFRESH_SECONDS = 30.0
FAILURE_TTL_SECONDS = 30.0
# Key sets kept at once, across every company's providers: an operator's list, but bounded.
MAX_KEY_SETS = 256
HEADERS = {
    "Accept": "application/json",
    "Accept-Encoding": "gzip",
    "User-Agent": f"Frontdesk/{__version__} (identity assertion verifier)",
}


class KeysUnavailable(Exception):
    """The provider's keys could not be had now; the message names no secret."""


@dataclass(frozen=True, slots=True)
class _Kept:
    keys: KeySet
    fetched_at: float


class IssuerKeys:
    def __init__(
        self,
        http: Callable[[], httpx.AsyncClient],
        policy: OutboundPolicy,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._http = http
        self._policy = policy
        self._clock = clock
        self._kept: dict[str, _Kept] = {}
        self._failed_until: dict[str, float] = {}
        # When each set was last fetched again for an unknown kid (not its first fetch).
        self._refreshed_at: dict[str, float] = {}
        self._fetching: dict[str, asyncio.Lock] = {}

    async def key(self, jwks_uri: str, kid: str | None) -> Key | None:
        """The key ``kid`` names in the provider's set (with no ``kid``, the set's only key),
        fetching the set once more when the kept one lacks it; None when it has no such
        key. KeysUnavailable when the set cannot be fetched."""
        asked_at = self._clock()
        found = _pick(await self._keys(jwks_uri, asked_at, refresh=False), kid)
        if found is None:
            # Perhaps the provider rotated its keys (a new kid): fetch them once more.
            found = _pick(await self._keys(jwks_uri, asked_at, refresh=True), kid)
        return found

    async def _keys(self, jwks_uri: str, asked_at: float, *, refresh: bool) -> KeySet:
        lock = self._fetching.setdefault(jwks_uri, asyncio.Lock())
        async with lock:
            now = self._clock()
            kept = self._kept.get(jwks_uri)
            if kept is not None and now - kept.fetched_at < KEYS_TTL_SECONDS:
                # A refresh is skipped when another caller fetched while this one waited,
                # or when the last fetch is too recent (KEY_REFRESH_SECONDS).
                if not refresh or kept.fetched_at >= asked_at:
                    return kept.keys
                if now < self._refreshed_at.get(jwks_uri, -KEY_REFRESH_SECONDS) + (
                    KEY_REFRESH_SECONDS
                ):
                    return kept.keys
                self._refreshed_at[jwks_uri] = now
            if now < self._failed_until.get(jwks_uri, 0.0):
                raise KeysUnavailable("the identity provider's keys are unavailable")
            try:
                keys = await self._fetch(jwks_uri)
            except KeysUnavailable:
                self._failed_until[jwks_uri] = self._clock() + FAILURE_TTL_SECONDS
                raise
            if len(self._kept) >= MAX_KEY_SETS and jwks_uri not in self._kept:
                self._kept.clear()
                self._failed_until.clear()
                self._refreshed_at.clear()
            self._kept[jwks_uri] = _Kept(keys, self._clock())
            return keys

    async def _fetch(self, jwks_uri: str) -> KeySet:
        try:
            answer = await self._policy.call(self._http(), "GET", jwks_uri, headers=HEADERS)
        except OutboundFailure as failure:
            return self._unavailable(jwks_uri, str(failure))
        if answer.status != 200:
            return self._unavailable(jwks_uri, f"the provider answered HTTP {answer.status}")
        try:
            document = orjson.loads(answer.body)
            keys = KeySet.import_key_set(document)
        except (orjson.JSONDecodeError, JoseError, ValueError, KeyError, TypeError) as error:
            return self._unavailable(
                jwks_uri, f"the key set is not usable ({type(error).__name__})"
            )
        if any(key.is_private for key in keys):
            # A provider that publishes private keys has given them away: trust none of it.
            return self._unavailable(jwks_uri, "the key set holds a private key")
        return keys

    @staticmethod
    def _unavailable(jwks_uri: str, reason: str) -> KeySet:
        log.warning("assertion_keys_unavailable", jwks_uri=jwks_uri[:200], reason=reason)
        raise KeysUnavailable("the identity provider's keys are unavailable")


def _pick(keys: KeySet, kid: str | None) -> Key | None:
    if kid is None:
        return keys.keys[0] if len(keys.keys) == 1 else None
    for key in keys.keys:
        if key.kid == kid:
            return key
    return None
