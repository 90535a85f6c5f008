"""The grant store on a SQLite file: ``GrantRepository``, with the access-token lookup
behind every signed-in call made synchronously (store.sqlite_lookups says why)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.grants import GrantRepository
from frontdesk.store.sqlite_lookups import SqliteAccessReader, Unavailable


class SqliteGrantRepository(GrantRepository):
    def __init__(self, engine: AsyncEngine, reader: SqliteAccessReader) -> None:
        super().__init__(engine)
        self._reader = reader

    async def _find_access(self, tenant_key: str, token_hash: str) -> AccessRecord | None:
        now = datetime.now(UTC)
        found = self._reader.find(token_hash, tenant_key, now)
        if isinstance(found, Unavailable):
            return await super()._find_access(tenant_key, token_hash)
        if found is None:
            return None
        grant, used = found
        # The first use is a write, made once per token and through the engine like any
        # other (oauth.refresh relies on it): it rechecks the revocation.
        if not used and not await self._mark_used(token_hash, now):
            return None
        return grant
