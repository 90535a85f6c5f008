"""The grant statements on the hot path, for PostgreSQL: the access-token lookup behind
every signed-in call (kept in memory and batched, store.access_lookups), and the refresh
grant's lookup and rotation.

The same checks and the same atomicity as ``GrantRepository``, whose SQLAlchemy versions
serve SQLite and every rarer statement; here each is one SQL text run on asyncpg
(store.postgres says why). The rotation is a single statement: spending the token, writing
the next pair and recording the audit event happen together or not at all, and of many
concurrent rotations of one token the row lock lets exactly one spend it.
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

# $1 token hash, $2 family, $3 now, $4/$5 access hash/expiry, $6/$7 refresh hash/expiry,
# $8 tenant, $9 client, $10 audit event, $11 its detail. The family must still be live.
ROTATE_REFRESH = """
WITH spent AS (
    UPDATE refresh_tokens SET used_at = $3
    WHERE token_hash = $1 AND used_at IS NULL
      AND family_id = (SELECT id FROM token_families WHERE id = $2 AND revoked_at IS NULL)
    RETURNING family_id
), next_access AS (
    INSERT INTO access_tokens (token_hash, family_id, expires_at, created_at)
    SELECT $4, family_id, $5, $3 FROM spent
), next_refresh AS (
    INSERT INTO refresh_tokens (token_hash, family_id, expires_at, created_at)
    SELECT $6, family_id, $7, $3 FROM spent
), logged AS (
    INSERT INTO audit_events (tenant_key, occurred_at, event, client_id, family_id, detail)
    SELECT $8, $3, $10, $9, family_id, $11::jsonb FROM spent
)
SELECT count(*) FROM spent
"""

# What GrantRepository.rotate_refresh records, as the JSON text asyncpg sends for jsonb.
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

    async def rotate_refresh(
        self,
        tenant_key: str,
        client_id: str,
        token_hash: str,
        family_id: int,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        async with self._pool.connection() as connection:
            spent = await connection.fetchval(
                ROTATE_REFRESH,
                token_hash,
                family_id,
                now,
                tokens.access_hash,
                tokens.access_expires_at,
                tokens.refresh_hash,
                tokens.refresh_expires_at,
                tenant_key,
                client_id,
                Event.TOKENS_ISSUED.value,
                ROTATION_DETAIL,
            )
        if spent != 1:
            await self.revoke_family(family_id, now, "refresh_token_reuse")
            return False
        return True
