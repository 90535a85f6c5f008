"""What the grants need from storage, as one Protocol every backend satisfies.

The OAuth side (oauth.grants, oauth.refresh) makes every protocol check (client, redirect
URI, PKCE, expiry, scope) and every decision; a backend keeps the state and executes each
step atomically, as a compare-and-set on the state the decision was made from, reporting
False when a concurrent change got there first. So no backend can forget a rule, and none
writes one a second time. Storage imports these types; nothing here imports storage.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from frontdesk.oauth.refresh import IssuedPair, RefreshState


@dataclass(frozen=True, slots=True)
class CodeRecord:
    client_id: str
    customer_id: int
    redirect_uri: str
    code_challenge: str
    scope: str
    resource: str | None
    expires_at: datetime
    used_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewTokens:
    """Hashes and expiry times of a pair about to be issued."""

    access_hash: str
    access_expires_at: datetime
    refresh_hash: str
    refresh_expires_at: datetime


class AccessRecord(NamedTuple):
    """A live access token's grant: read on every signed-in call, so a tuple (a frozen
    dataclass costs three times as much to build). Its expiry is not among its fields: the
    lookup's statement compares it, and decoding the timestamp for nothing cost each
    signed-in call a datetime."""

    client_id: str
    scope: str
    resource: str | None
    subject: str
    email: str | None
    name: str | None


class GrantStorage(Protocol):
    # Codes -----------------------------------------------------------------------------

    async def save_code(
        self, tenant_key: str, code_hash: str, record: CodeRecord, now: datetime
    ) -> None: ...

    async def find_code(self, tenant_key: str, code_hash: str) -> CodeRecord | None: ...

    async def exchange_code(
        self,
        tenant_key: str,
        code_hash: str,
        record: CodeRecord,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        """Spend the unspent code and start a token family with the pair; False when
        another redemption spent it first."""
        ...

    async def revoke_code_grants(self, tenant_key: str, code_hash: str, now: datetime) -> None:
        """A spent code came back: revoke every family it started (RFC 6749 4.1.2)."""
        ...

    # Refresh tokens --------------------------------------------------------------------

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshState | None: ...

    async def rotate_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        """Spend the token, if it is still unspent and its family live, and issue ``tokens``
        as the pair it produced; False when it no longer is."""
        ...

    async def retry_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        superseded: IssuedPair,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        """In one transaction: revoke the ``superseded`` pair, if it is still the token's
        latest and still unused (its refresh token is spent, so that presenting it later
        reads as reuse), and issue ``tokens`` in its place; False when anything differs."""
        ...

    async def revoke_family(self, family_id: int, now: datetime, reason: str) -> None: ...

    # Access tokens ---------------------------------------------------------------------

    def find_access(self, tenant_key: str, token_hash: str) -> Awaitable[AccessRecord | None]:
        """The grant behind a live access token of this company: unexpired, unrevoked,
        family unrevoked. The first time a token is found it is marked used, durably,
        before this answers, so that a refresh retry can tell a pair nobody has used."""
        ...

    # Revocation (RFC 7009) -------------------------------------------------------------

    async def revoke_token(
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime
    ) -> None:
        """Revoke a refresh token's family, or one access token, if this client holds it."""
        ...
