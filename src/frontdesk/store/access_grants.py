"""Access tokens: the grant behind a live one, looked up on every signed-in call (on
PostgreSQL store.access_lookups answers instead), and its first use recorded. The
statements are store.hot_statements', which the raw drivers' lookups run too.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.hot_statements import FIND_LIVE_ACCESS_GRANT, MARK_ACCESS_USED


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
        async with self._reads.connect() as connection:
            found = await connection.execute(
                FIND_LIVE_ACCESS_GRANT,
                {"token": token_hash, "tenant": tenant_key, "now": now},
            )
            row = found.first()
        if row is None:
            return None
        if not row.used and not await self._mark_used(token_hash, now):
            return None
        return AccessRecord(*row[:8])

    async def _mark_used(self, token_hash: str, now: datetime) -> bool:
        """Record a token's first use; False when it was revoked since it was read (it
        must not be used after all)."""
        async with self._engine.begin() as connection:
            marked = await connection.execute(MARK_ACCESS_USED, {"token": token_hash, "now": now})
        return marked.rowcount == 1
