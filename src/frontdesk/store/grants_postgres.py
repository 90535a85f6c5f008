"""The grant statements on the hot path, for PostgreSQL: the access-token lookup behind
every signed-in call (kept in memory and batched, store.access_lookups), and the two
statements of a refresh grant.

The same statements as ``GrantRepository``, which serves SQLite and every rarer statement
(a company's refresh retry among them): each is written once in store.hot_statements and
run here as its compiled text on asyncpg (store.postgres says why). A refresh grant reads
the token's state, oauth.refresh decides, and a rotation is one statement: spending the
token on the condition that it is still unspent and its family live (the state the
decision read), writing the next pair and recording the audit event happen together or not
at all, in one round trip, and of many concurrent spends of one token the row lock lets
exactly one win.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime

import orjson
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import hot_statements, refresh_grants
from frontdesk.store.access_lookups import AccessLookups
from frontdesk.store.audit import Event
from frontdesk.store.change_feed import ChangeFeed
from frontdesk.store.grant_records import AccessRecord, Ending, NewTokens, RefreshState
from frontdesk.store.grants import GrantRepository
from frontdesk.store.hot_statements import compiled
from frontdesk.store.postgres import AsyncpgPool

# store.hot_statements' statements, compiled for asyncpg: the state a refresh decision
# reads, and the rotation as one statement (spend, next pair, audit event).
FIND_REFRESH = compiled(hot_statements.FIND_REFRESH, "postgresql+asyncpg", ("token", "tenant")).text
ROTATE_REFRESH = compiled(hot_statements.ROTATE_REFRESH, "postgresql+asyncpg")

# What the engine's rotation records (store.refresh_grants), as the JSON text asyncpg sends
# for jsonb.
ROTATION_DETAIL = orjson.dumps(refresh_grants.ROTATION_DETAIL).decode()


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
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime, ending: Ending
    ) -> None:
        await super().revoke_token(tenant_key, client_id, token_hash, now, ending)
        await self._feed.caught_up()

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshState | None:
        async with self._pool.connection() as connection:
            row = await connection.fetchrow(FIND_REFRESH, token_hash, tenant_key)
        return None if row is None else refresh_grants.refresh_state(tuple(row))

    async def rotate_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        tokens: NewTokens,
        kept_successor: str | None,
        now: datetime,
    ) -> bool:
        arguments = ROTATE_REFRESH.arguments(
            {
                "token": token_hash,
                "tenant": tenant_key,
                "now": now,
                "access_hash": tokens.access_hash,
                "access_expires_at": tokens.access_expires_at,
                "refresh_hash": tokens.refresh_hash,
                "refresh_expires_at": tokens.refresh_expires_at,
                "family": state.family_id,
                "client": state.client_id,
                "event": Event.TOKENS_ISSUED.value,
                "detail": ROTATION_DETAIL,
                "kept_successor": kept_successor,
            }
        )
        async with self._pool.connection() as connection:
            spent: int = await connection.fetchval(ROTATE_REFRESH.text, *arguments)
        return spent == 1
