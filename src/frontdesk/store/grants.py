"""Authorization codes, token families, access and refresh tokens: the SQLAlchemy
backend of oauth.storage.GrantStorage, serving SQLite and PostgreSQL's rarer statements.

Protocol checks and decisions stay on the OAuth side (oauth.grants, oauth.refresh); this
module keeps the state and executes each step as a compare-and-set on the state the step
was decided from: a code or refresh token is spent by one conditional UPDATE, and the
tokens it buys are written in the same transaction, so of many concurrent redemptions
exactly one wins and none half-issues.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime

from sqlalchemy import Update, and_, func, insert, select, update
from sqlalchemy.sql.elements import ColumnElement

from frontdesk.grant_records import AccessRecord, CodeRecord, IssuedPair, NewTokens, RefreshState
from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.database import for_reads
from frontdesk.store.engine import AsyncConnection, AsyncEngine
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import (
    access_tokens,
    authorization_codes,
    customers,
    refresh_tokens,
    token_families,
)

# The pair a spent refresh token produced: its successor refresh token and, through it, the
# access token issued beside that one.
_successor = refresh_tokens.alias("successor")
_successor_access = access_tokens.alias("successor_access")


class _Superseded(Exception):
    """A retry's compare-and-set found other state than its decision read: roll back."""


class GrantRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)

    # Codes -----------------------------------------------------------------------------

    async def save_code(
        self, tenant_key: str, code_hash: str, record: CodeRecord, now: datetime
    ) -> None:
        async with self._engine.begin() as connection:
            await connection.execute(
                insert(authorization_codes).values(
                    code_hash=code_hash,
                    tenant_key=tenant_key,
                    client_id=record.client_id,
                    customer_id=record.customer_id,
                    redirect_uri=record.redirect_uri,
                    code_challenge=record.code_challenge,
                    scope=record.scope,
                    resource=record.resource,
                    expires_at=record.expires_at,
                    created_at=now,
                )
            )

    async def find_code(self, tenant_key: str, code_hash: str) -> CodeRecord | None:
        table = authorization_codes.c
        query = select(
            table.client_id,
            table.customer_id,
            table.redirect_uri,
            table.code_challenge,
            table.scope,
            table.resource,
            table.expires_at,
            table.used_at,
        ).where(table.code_hash == code_hash, table.tenant_key == tenant_key)
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        return CodeRecord(*row[:6], as_utc(row.expires_at), row.used_at)

    async def exchange_code(
        self,
        tenant_key: str,
        code_hash: str,
        record: CodeRecord,
        tokens: NewTokens,
        now: datetime,
    ) -> bool:
        """Spend the code and start a token family with the pair, atomically.

        False when another redemption spent the code first: that is a replay, and
        whatever the code issued is revoked.
        """
        async with self._engine.begin() as connection:
            spent = await connection.execute(
                update(authorization_codes)
                .where(
                    authorization_codes.c.code_hash == code_hash,
                    authorization_codes.c.tenant_key == tenant_key,
                    authorization_codes.c.used_at.is_(None),
                )
                .values(used_at=now)
            )
            if spent.rowcount != 1:
                return False
            family = await connection.execute(
                insert(token_families)
                .values(
                    tenant_key=tenant_key,
                    client_id=record.client_id,
                    customer_id=record.customer_id,
                    scope=record.scope,
                    resource=record.resource,
                    code_hash=code_hash,
                    created_at=now,
                )
                .returning(token_families.c.id)
            )
            family_id = int(family.scalar_one())
            await _insert_pair(connection, family_id, tokens, now)
            await audit.record(
                connection,
                tenant_key,
                Event.TOKENS_ISSUED,
                now,
                client_id=record.client_id,
                family_id=family_id,
                grant="authorization_code",
            )
        return True

    async def revoke_code_grants(self, tenant_key: str, code_hash: str, now: datetime) -> None:
        """A spent code came back: revoke every token it issued (RFC 6749 4.1.2)."""
        async with self._engine.begin() as connection:
            await audit.record(connection, tenant_key, Event.CODE_REPLAYED, now)
            revoked = await connection.execute(
                update(token_families)
                .where(
                    token_families.c.code_hash == code_hash,
                    token_families.c.tenant_key == tenant_key,
                    token_families.c.revoked_at.is_(None),
                )
                .values(revoked_at=now)
                .returning(token_families.c.id, token_families.c.client_id)
            )
            for family_id, client_id in revoked.all():
                await audit.record(
                    connection,
                    tenant_key,
                    Event.FAMILY_REVOKED,
                    now,
                    client_id=client_id,
                    family_id=family_id,
                    reason="code_replayed",
                )

    # Refresh tokens --------------------------------------------------------------------

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
                    _family_live(state.family_id),
                )
                .values(used_at=now, successor_hash=tokens.refresh_hash)
            )
            if spent.rowcount != 1:
                return False
            await _insert_pair(connection, state.family_id, tokens, now)
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
                        _family_live(state.family_id),
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
                await _insert_pair(connection, state.family_id, tokens, now)
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
            await _revoke_family(connection, family_id, now, reason)

    # Access tokens ---------------------------------------------------------------------

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
        return AccessRecord(*row[:6])

    async def _mark_used(self, token_hash: str, now: datetime) -> bool:
        """Record a token's first use; False when it was revoked since it was read (a
        refresh retry superseded it, and it must not be used after all)."""
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

    # Revocation (RFC 7009) -------------------------------------------------------------

    async def revoke_token(
        self, tenant_key: str, client_id: str, token_hash: str, now: datetime
    ) -> None:
        """Revoke a refresh token's family, or one access token, if this client holds it."""
        family = token_families.c
        ours = and_(family.tenant_key == tenant_key, family.client_id == client_id)
        async with self._engine.begin() as connection:
            refresh_family = (
                await connection.execute(
                    select(refresh_tokens.c.family_id)
                    .join(token_families, family.id == refresh_tokens.c.family_id)
                    .where(refresh_tokens.c.token_hash == token_hash, ours)
                )
            ).scalar()
            if refresh_family is not None:
                await audit.record(
                    connection,
                    tenant_key,
                    Event.TOKEN_REVOKED,
                    now,
                    client_id=client_id,
                    family_id=int(refresh_family),
                    revoked="refresh_token",
                )
                await _revoke_family(connection, int(refresh_family), now, "revocation")
                return
            access_family = (
                select(family.id).where(family.id == access_tokens.c.family_id, ours).exists()
            )
            revoked = await connection.execute(
                update(access_tokens)
                .where(
                    access_tokens.c.token_hash == token_hash,
                    access_tokens.c.revoked_at.is_(None),
                    access_family,
                )
                .values(revoked_at=now)
                .returning(access_tokens.c.family_id)
            )
            for (family_id,) in revoked.all():
                await audit.record(
                    connection,
                    tenant_key,
                    Event.TOKEN_REVOKED,
                    now,
                    client_id=client_id,
                    family_id=family_id,
                    revoked="access_token",
                )


async def _insert_pair(
    connection: AsyncConnection, family_id: int, tokens: NewTokens, now: datetime
) -> None:
    await connection.execute(
        insert(access_tokens).values(
            token_hash=tokens.access_hash,
            family_id=family_id,
            expires_at=tokens.access_expires_at,
            created_at=now,
        )
    )
    await connection.execute(
        insert(refresh_tokens).values(
            token_hash=tokens.refresh_hash,
            family_id=family_id,
            expires_at=tokens.refresh_expires_at,
            created_at=now,
            access_hash=tokens.access_hash,
        )
    )


def _family_live(family_id: int) -> ColumnElement[bool]:
    return (
        select(token_families.c.id)
        .where(token_families.c.id == family_id, token_families.c.revoked_at.is_(None))
        .exists()
    )


async def _exactly_one(connection: AsyncConnection, statement: Update) -> None:
    if (await connection.execute(statement)).rowcount != 1:
        raise _Superseded


async def _revoke_family(
    connection: AsyncConnection, family_id: int, now: datetime, reason: str
) -> None:
    revoked = await connection.execute(
        update(token_families)
        .where(token_families.c.id == family_id, token_families.c.revoked_at.is_(None))
        .values(revoked_at=now)
        .returning(token_families.c.tenant_key, token_families.c.client_id)
    )
    for tenant_key, client_id in revoked.all():
        if reason == "refresh_token_reuse":
            await audit.record(
                connection,
                tenant_key,
                Event.REFRESH_REUSE_DETECTED,
                now,
                client_id=client_id,
                family_id=family_id,
            )
        await audit.record(
            connection,
            tenant_key,
            Event.FAMILY_REVOKED,
            now,
            client_id=client_id,
            family_id=family_id,
            reason=reason,
        )
