"""The grant statements on the hot path, for PostgreSQL: the access-token lookup behind
every signed-in call (kept in memory and batched, store.access_lookups), and the two
statements of a refresh grant.

The same state and the same atomicity as ``GrantRepository``, whose SQLAlchemy versions
serve SQLite and every rarer statement (a company's refresh retry among them); here each is one SQL
text run on asyncpg (store.postgres says why). A refresh grant reads the token's state,
oauth.refresh decides, and a rotation is one statement: spending the token on the
condition that it is still unspent and its family live (the state the decision read),
writing the next pair and recording the audit event happen together or not at all, in one
round trip, and of many concurrent spends of one token the row lock lets exactly one win.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime

import orjson
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.access_lookups import AccessLookups
from frontdesk.store.audit import Event
from frontdesk.store.change_feed import ChangeFeed
from frontdesk.store.grant_records import AccessRecord, Ending, IssuedPair, NewTokens, RefreshState
from frontdesk.store.grants import GrantRepository
from frontdesk.store.postgres import AsyncpgPool

# The token, its family, and the refresh token its rotation produced (when there is one).
FIND_REFRESH = """
SELECT r.family_id, f.client_id, f.scope, r.expires_at, r.used_at, f.revoked_at IS NOT NULL,
       r.successor_hash, n.used_at IS NOT NULL, r.successor_sealed
FROM refresh_tokens r
JOIN token_families f ON f.id = r.family_id
LEFT JOIN refresh_tokens n ON n.token_hash = r.successor_hash
WHERE r.token_hash = $1 AND f.tenant_key = $2
"""

# $1 token hash, $2 tenant, $3 now, $4/$5 access hash/expiry, $6/$7 refresh hash/expiry,
# $8 family, $9 client, $10 audit event, $11 its detail, $12 the pair kept sealed for the
# company's retry window (or NULL). The conditions are only the state
# the decision read (unspent, family live); the UPDATE's row lock lets one spend win.
ROTATE_REFRESH = """
WITH spent AS (
    UPDATE refresh_tokens r SET used_at = $3, successor_hash = $6, successor_sealed = $12
    WHERE r.token_hash = $1 AND r.used_at IS NULL
      AND EXISTS (SELECT FROM token_families f WHERE f.id = $8 AND f.revoked_at IS NULL)
    RETURNING r.family_id
), next_access AS (
    INSERT INTO access_tokens (token_hash, family_id, expires_at, created_at)
    SELECT $4, family_id, $5, $3 FROM spent
), next_refresh AS (
    INSERT INTO refresh_tokens (token_hash, family_id, expires_at, created_at, access_hash)
    SELECT $6, family_id, $7, $3, $4 FROM spent
), logged AS (
    INSERT INTO audit_events (tenant_key, occurred_at, event, client_id, family_id, detail)
    SELECT $2, $3, $10, $9, family_id, $11::jsonb FROM spent
)
SELECT count(*) FROM spent
"""

# What GrantRepository.rotate_refresh records, as the JSON text asyncpg sends for jsonb.
ROTATION_DETAIL = orjson.dumps({"grant": "refresh_token"}).decode()


class PostgresGrantRepository(GrantRepository):
    def __init__(
        self, engine: AsyncEngine, pool: AsyncpgPool, lookup_pool: AsyncpgPool, feed: ChangeFeed
    ) -> None:
        super().__init__(engine)
        self._pool = pool
        self._feed = feed
        self._access = AccessLookups(lookup_pool, feed)

    def find_access(self, tenant_key: str, token_hash: str) -> Awaitable[AccessRecord | None]:
        return self._access.find(token_hash, tenant_key)

    # A revocation made here takes effect here before it is answered: the tokens it ended
    # may be kept in memory (store.access_lookups) until the feed delivers its notice.

    async def revoke_code_grants(
        self, tenant_key: str, code_hash: str, now: datetime, ending: Ending
    ) -> None:
        await super().revoke_code_grants(tenant_key, code_hash, now, ending)
        await self._feed.caught_up()

    async def revoke_family(self, family_id: int, now: datetime, ending: Ending) -> None:
        await super().revoke_family(family_id, now, ending)
        await self._feed.caught_up()

    async def revoke_token(
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime
    ) -> None:
        await super().revoke_token(tenant_key, client_id, token_hash, now)
        await self._feed.caught_up()

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshState | None:
        async with self._pool.connection() as connection:
            row = await connection.fetchrow(FIND_REFRESH, token_hash, tenant_key)
        if row is None:
            return None
        family_id, client_id, scope, expires_at, rotated_at, family_revoked = row[:6]
        successor_hash, successor_spent, kept_successor = row[6:]
        successor = None
        if successor_hash is not None:
            successor = IssuedPair(successor_hash, successor_spent)
        return RefreshState(
            family_id,
            client_id,
            scope,
            expires_at,
            rotated_at,
            family_revoked,
            successor,
            kept_successor,
        )

    async def rotate_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        tokens: NewTokens,
        kept_successor: str | None,
        now: datetime,
    ) -> bool:
        async with self._pool.connection() as connection:
            spent: int = await connection.fetchval(
                ROTATE_REFRESH,
                token_hash,
                tenant_key,
                now,
                tokens.access_hash,
                tokens.access_expires_at,
                tokens.refresh_hash,
                tokens.refresh_expires_at,
                state.family_id,
                state.client_id,
                Event.TOKENS_ISSUED.value,
                ROTATION_DETAIL,
                kept_successor,
            )
        return spent == 1
