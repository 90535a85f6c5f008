"""What the grants need from storage, as one Protocol every backend satisfies.

The OAuth side (oauth.grants, oauth.refresh) makes every protocol check (client, redirect
URI, PKCE, expiry, scope) and every decision; a backend keeps the state and executes each
step atomically, as a compare-and-set on the state the decision was made from, reporting
False when a concurrent change got there first. So no backend can forget a rule, and none
writes one a second time. The records both sides speak in are frontdesk.store.grant_records, at
the bottom of the house with the rest of the domain: storage imports them, never this.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import Protocol

from frontdesk.store.assertion_grants import AssertionRecord
from frontdesk.store.grant_records import AccessRecord, CodeRecord, Ending, NewTokens, RefreshState


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

    async def revoke_code_grants(
        self, tenant_key: str, code_hash: str, now: datetime, ending: Ending
    ) -> None:
        """A spent code came back: end every live family it started (RFC 6749 4.1.2), as
        ``ending`` says."""
        ...

    # Identity assertions (ID-JAG) -------------------------------------------------------

    async def redeem_assertion(
        self,
        tenant_key: str,
        record: AssertionRecord,
        tokens: NewTokens,
        with_refresh: bool,
        now: datetime,
    ) -> bool:
        """Spend the assertion and start a token family; False when it was spent before."""
        ...

    # Refresh tokens --------------------------------------------------------------------

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshState | None: ...

    async def rotate_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        tokens: NewTokens,
        kept_successor: str | None,
        now: datetime,
    ) -> bool:
        """Spend the token, if it is still unspent and its family live, and issue ``tokens``
        as the pair it produced, keeping ``kept_successor`` (that pair sealed, for the
        company's retry window) on the spent token; False when it no longer is."""
        ...

    async def retry_refresh(
        self, tenant_key: str, token_hash: str, state: RefreshState, now: datetime
    ) -> bool:
        """Record that the pair the token's rotation produced is answered again, if that
        pair is still the one ``state`` read, its refresh token unspent and the family live;
        False when anything differs. Nothing is issued."""
        ...

    async def revoke_family(self, family_id: int, now: datetime, ending: Ending) -> None:
        """End the family, if it is still live, as ``ending`` says."""
        ...

    # Access tokens ---------------------------------------------------------------------

    def find_access(self, tenant_key: str, token_hash: str) -> Awaitable[AccessRecord | None]:
        """The grant behind a live access token of this company: unexpired, unrevoked,
        family unrevoked. The first time a token is found it is marked used, durably,
        before this answers (the account page's "last used")."""
        ...

    # Revocation (RFC 7009) -------------------------------------------------------------

    async def revoke_token(
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime, ending: Ending
    ) -> None:
        """Revoke a refresh token's family, as ``ending`` says, or one access token, if this
        client holds it."""
        ...
