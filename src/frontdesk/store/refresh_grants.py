"""Refresh tokens (RFC 6749 6): the state a refresh decision reads (oauth.refresh), the
rotation that spends a token for the next pair, the retry that supersedes a pair nobody
used, and the end of a family.

Each step is a compare-and-set on the state the decision was made from, in one transaction
with the pair it writes and the audit event it records.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Update, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.grant_records import IssuedPair, NewTokens, RefreshState
from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.families import family_live, insert_pair, revoke_family_in
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import access_tokens, refresh_tokens, token_families

# The pair a spent refresh token produced: its successor refresh token and, through it, the
# access token issued beside that one.
_successor = refresh_tokens.alias("successor")
_successor_access = access_tokens.alias("successor_access")


class _Superseded(Exception):
    """A retry's compare-and-set found other state than its decision read: roll back."""


class RefreshGrants:
    """The refresh-token part of store.grants.GrantRepository."""

    _engine: AsyncEngine
    _reads: AsyncEngine

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshState | None:
        family = token_families.c
        token = refresh_tokens.c
        query = (
            select(
                token.family_id,
                family.client_id,
                family.scope,
                token.expires_at,
                token.used_at,
                family.revoked_at,
                token.successor_hash,
                _successor.c.used_at,
                _successor.c.access_hash,
                _successor_access.c.used_at,
                _successor_access.c.revoked_at,
            )
            .select_from(
                refresh_tokens.join(token_families, family.id == token.family_id)
                .outerjoin(_successor, _successor.c.token_hash == token.successor_hash)
                .outerjoin(
                    _successor_access, _successor_access.c.token_hash == _successor.c.access_hash
                )
            )
            .where(token.token_hash == token_hash, family.tenant_key == tenant_key)
        )
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        (
            family_id,
            client_id,
            scope,
            expires_at,
            used_at,
            revoked_at,
            successor_hash,
            successor_used_at,
            successor_access_hash,
            access_used_at,
            access_revoked_at,
        ) = row
        successor = None
        if successor_hash is not None:
            successor = IssuedPair(
                successor_hash,
                successor_used_at is not None,
                successor_access_hash,
                access_used_at is not None,
                access_revoked_at is not None,
            )
        return RefreshState(
            family_id,
            client_id,
            scope,
            as_utc(expires_at),
            None if used_at is None else as_utc(used_at),
            revoked_at is not None,
            successor,
        )

    async def rotate_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        async with self._engine.begin() as connection:
            spent = await connection.execute(
                update(refresh_tokens)
                .where(
                    refresh_tokens.c.token_hash == token_hash,
                    refresh_tokens.c.used_at.is_(None),
                    family_live(state.family_id),
                )
                .values(used_at=now, successor_hash=tokens.refresh_hash)
            )
            if spent.rowcount != 1:
                return False
            await insert_pair(connection, state.family_id, tokens, now)
            await audit.record(
                connection,
                tenant_key,
                Event.TOKENS_ISSUED,
                now,
                client_id=state.client_id,
                family_id=state.family_id,
                grant="refresh_token",
            )
        return True

    async def retry_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        superseded: IssuedPair,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        # The presented token's row is taken first, as a rotation takes it; every other
        # writer of these rows (a rotation of the superseded refresh token, a first use of
        # its access token) takes one of them only, so no cycle of waits can form.
        try:
            async with self._engine.begin() as connection:
                await _exactly_one(
                    connection,
                    update(refresh_tokens)
                    .where(
                        refresh_tokens.c.token_hash == token_hash,
                        refresh_tokens.c.successor_hash == superseded.refresh_hash,
                        family_live(state.family_id),
                    )
                    .values(successor_hash=tokens.refresh_hash),
                )
                # Spent with no successor: presented later, it reads as reuse.
                await _exactly_one(
                    connection,
                    update(refresh_tokens)
                    .where(
                        refresh_tokens.c.token_hash == superseded.refresh_hash,
                        refresh_tokens.c.used_at.is_(None),
                    )
                    .values(used_at=now),
                )
                await _exactly_one(
                    connection,
                    update(access_tokens)
                    .where(
                        access_tokens.c.token_hash == superseded.access_hash,
                        access_tokens.c.used_at.is_(None),
                        access_tokens.c.revoked_at.is_(None),
                    )
                    .values(revoked_at=now),
                )
                await insert_pair(connection, state.family_id, tokens, now)
                await audit.record(
                    connection,
                    tenant_key,
                    Event.REFRESH_RETRIED,
                    now,
                    client_id=state.client_id,
                    family_id=state.family_id,
                )
        except _Superseded:
            return False
        return True

    async def revoke_family(self, family_id: int, now: datetime, reason: str) -> None:
        async with self._engine.begin() as connection:
            await revoke_family_in(connection, family_id, now, reason)


async def _exactly_one(connection: AsyncConnection, statement: Update) -> None:
    if (await connection.execute(statement)).rowcount != 1:
        raise _Superseded
