"""The grant statements on the hot path, for PostgreSQL: the access-token lookup behind
every signed-in call (kept in memory and batched, store.access_lookups), the refresh
grant, and the lookup that says why a refresh was refused.

The same checks and the same atomicity as ``GrantRepository``, whose SQLAlchemy versions
serve SQLite and every rarer statement; here each is one SQL text run on asyncpg
(store.postgres says why). The refresh grant is a single statement: checking the token,
spending it, writing the next pair and recording the audit event happen together or not
at all, in one round trip, and of many concurrent spends of one token the row lock lets
exactly one win.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime

import orjson

from frontdesk.store.access_lookups import AccessLookups
from frontdesk.store.audit import Event
from frontdesk.store.change_feed import ChangeFeed
from frontdesk.store.engine import AsyncEngine
from frontdesk.store.grants import AccessRecord, GrantRepository, NewTokens, RefreshRecord
from frontdesk.store.postgres import DriverPool

FIND_REFRESH = """
SELECT r.family_id, f.client_id, f.customer_id, f.scope, f.resource, r.expires_at,
       r.used_at, f.revoked_at IS NOT NULL
FROM refresh_tokens r
JOIN token_families f ON f.id = r.family_id
WHERE r.token_hash = $1 AND f.tenant_key = $2
"""

# $1 token hash, $2 tenant, $3 client, $4 now, $5/$6 access hash/expiry, $7/$8 refresh
# hash/expiry, $9 the scopes asked for, $10 audit event, $11 its detail. The conditions
# are RefreshRecord.spendable's: this client's token, unspent and unexpired, its family
# live, its grant covering what is asked. The UPDATE's row lock lets one spend win.
SPEND_REFRESH = """
WITH spent AS (
    UPDATE refresh_tokens r SET used_at = $4
    FROM token_families f
    WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $4
      AND f.id = r.family_id AND f.tenant_key = $2 AND f.client_id = $3
      AND f.revoked_at IS NULL AND string_to_array(f.scope, ' ') @> $9::text[]
    RETURNING r.family_id, f.scope
), next_access AS (
    INSERT INTO access_tokens (token_hash, family_id, expires_at, created_at)
    SELECT $5, family_id, $6, $4 FROM spent
), next_refresh AS (
    INSERT INTO refresh_tokens (token_hash, family_id, expires_at, created_at)
    SELECT $7, family_id, $8, $4 FROM spent
), logged AS (
    INSERT INTO audit_events (tenant_key, occurred_at, event, client_id, family_id, detail)
    SELECT $2, $4, $10, $3, family_id, $11::jsonb FROM spent
)
SELECT scope FROM spent
"""

# What GrantRepository.spend_refresh records, as the JSON text asyncpg sends for jsonb.
ROTATION_DETAIL = orjson.dumps({"grant": "refresh_token"}).decode()


class PostgresGrantRepository(GrantRepository):
    def __init__(
        self, engine: AsyncEngine, pool: DriverPool, lookup_pool: DriverPool, feed: ChangeFeed
    ) -> None:
        super().__init__(engine)
        self._pool = pool
        self._feed = feed
        self._access = AccessLookups(lookup_pool, feed)

    def find_access(self, tenant_key: str, token_hash: str) -> Awaitable[AccessRecord | None]:
        return self._access.find(token_hash, tenant_key)

    # A revocation made here takes effect here before it is answered: the tokens it ended
    # may be kept in memory (store.access_lookups) until the feed delivers its notice.

    async def revoke_code_grants(self, tenant_key: str, code_hash: str, now: datetime) -> None:
        await super().revoke_code_grants(tenant_key, code_hash, now)
        await self._feed.caught_up()

    async def revoke_family(self, family_id: int, now: datetime, reason: str) -> None:
        await super().revoke_family(family_id, now, reason)
        await self._feed.caught_up()

    async def revoke_token(
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime
    ) -> None:
        await super().revoke_token(tenant_key, client_id, token_hash, now)
        await self._feed.caught_up()

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshRecord | None:
        async with self._pool.connection() as connection:
            row = await connection.fetchrow(FIND_REFRESH, token_hash, tenant_key)
        if row is None:
            return None
        return RefreshRecord(*row)

    async def spend_refresh(
        self,
        tenant_key: str,
        client_id: str,
        token_hash: str,
        requested: frozenset[str],
        tokens: NewTokens,
        now: datetime,
    ) -> str | None:
        async with self._pool.connection() as connection:
            scope: str | None = await connection.fetchval(
                SPEND_REFRESH,
                token_hash,
                tenant_key,
                client_id,
                now,
                tokens.access_hash,
                tokens.access_expires_at,
                tokens.refresh_hash,
                tokens.refresh_expires_at,
                list(requested),
                Event.TOKENS_ISSUED.value,
                ROTATION_DETAIL,
            )
        return scope
