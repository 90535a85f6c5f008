"""Access tokens: the grant behind a live one, looked up on every signed-in call (on
PostgreSQL store.access_lookups answers instead), and its first use recorded.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.tables import access_tokens, customers, token_families


class AccessGrants:
    """The access-token part of store.grants.GrantRepository."""

    _engine: AsyncEngine
    _reads: AsyncEngine

    def find_access(self, tenant_key: str, token_hash: str) -> Awaitable[AccessRecord | None]:
        """The grant behind a live access token of this company: unexpired (when the
        lookup runs), unrevoked, family unrevoked. An awaitable rather than a coroutine
        method, so that a store that batches lookups can hand back its future directly."""
        return self._find_access(tenant_key, token_hash)

    async def _find_access(self, tenant_key: str, token_hash: str) -> AccessRecord | None:
        now = datetime.now(UTC)
        family = token_families.c
        query = (
            select(
                family.client_id,
                family.scope,
                family.resource,
                customers.c.subject,
                customers.c.email,
                customers.c.name,
                customers.c.email_verified,
                family.tool_snapshot,
                access_tokens.c.used_at,
            )
            .select_from(
                access_tokens.join(
                    token_families, token_families.c.id == access_tokens.c.family_id
                ).join(customers, customers.c.id == family.customer_id)
            )
            .where(
                access_tokens.c.token_hash == token_hash,
                family.tenant_key == tenant_key,
                access_tokens.c.expires_at > now,
                access_tokens.c.revoked_at.is_(None),
                family.revoked_at.is_(None),
            )
        )
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        if row.used_at is None and not await self._mark_used(token_hash, now):
            return None
        return AccessRecord(*row[:8])

    async def _mark_used(self, token_hash: str, now: datetime) -> bool:
        """Record a token's first use; False when it was revoked since it was read (it
        must not be used after all)."""
        async with self._engine.begin() as connection:
            marked = await connection.execute(
                update(access_tokens)
                .where(
                    access_tokens.c.token_hash == token_hash,
                    access_tokens.c.revoked_at.is_(None),
                )
                # Kept if another call marked it first.
                .values(used_at=func.coalesce(access_tokens.c.used_at, now))
            )
        return marked.rowcount == 1
