"""Authorization codes, token families, access and refresh tokens.

Protocol checks (PKCE, redirect URI, client, expiry) stay in the OAuth handlers; this
module keeps the state and makes the single-use transitions atomic: a code or refresh
token is spent by one conditional UPDATE, and the tokens it buys are written in the same
transaction, so of many concurrent redemptions exactly one wins and none half-issues.
The refresh grant is the exception: its checks are the conditions of the spend itself,
so that on PostgreSQL the whole grant is one statement (store.grants_postgres); the
handler looks the token up only to say why a refused one was refused.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from sqlalchemy import and_, insert, select, update

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


@dataclass(frozen=True, slots=True)
class CodeRecord:
    client_id: str
    customer_id: int
    redirect_uri: str
    code_challenge: str
    scope: str
    resource: str | None
    expires_at: datetime
    used_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewTokens:
    """Hashes and expiry times of a pair about to be issued."""

    access_hash: str
    access_expires_at: datetime
    refresh_hash: str
    refresh_expires_at: datetime


@dataclass(frozen=True, slots=True)
class RefreshRecord:
    family_id: int
    client_id: str
    customer_id: int
    scope: str
    resource: str | None
    expires_at: datetime
    used_at: datetime | None
    family_revoked: bool

    def spendable(self, client_id: str, requested: frozenset[str], now: datetime) -> bool:
        """Whether this client may spend the token now for ``requested`` scopes: the
        conditions the PostgreSQL statement (store.grants_postgres) writes in SQL."""
        return (
            self.client_id == client_id
            and not self.family_revoked
            and self.used_at is None
            and self.expires_at > now
            and requested <= frozenset(self.scope.split())
        )


class AccessRecord(NamedTuple):
    """A live access token's grant: read on every signed-in call, so a tuple (a frozen
    dataclass costs three times as much to build). Its expiry is not among its fields: the
    lookup's statement compares it, and decoding the timestamp for nothing cost each
    signed-in call a datetime."""

    client_id: str
    scope: str
    resource: str | None
    subject: str
    email: str | None
    name: str | None


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

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshRecord | None:
        family = token_families.c
        query = (
            select(
                refresh_tokens.c.family_id,
                family.client_id,
                family.customer_id,
                family.scope,
                family.resource,
                refresh_tokens.c.expires_at,
                refresh_tokens.c.used_at,
                family.revoked_at,
            )
            .join(token_families, token_families.c.id == refresh_tokens.c.family_id)
            .where(refresh_tokens.c.token_hash == token_hash, family.tenant_key == tenant_key)
        )
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        return RefreshRecord(
            *row[:5], as_utc(row.expires_at), row.used_at, row.revoked_at is not None
        )

    async def spend_refresh(
        self,
        tenant_key: str,
        client_id: str,
        token_hash: str,
        requested: frozenset[str],
        tokens: NewTokens,
        now: datetime,
    ) -> str | None:
        """Spend a live refresh token of this client and issue the next pair in its family,
        atomically: the grant's scope, or None when the token may not be spent (unknown,
        another client's, spent, expired, revoked, or asked for scopes its grant lacks).

        Of concurrent spends of one token exactly one wins; the others get None.
        """
        record = await self.find_refresh(tenant_key, token_hash)
        if record is None or not record.spendable(client_id, requested, now):
            return None
        async with self._engine.begin() as connection:
            live_family = (
                select(token_families.c.id)
                .where(
                    token_families.c.id == record.family_id,
                    token_families.c.revoked_at.is_(None),
                )
                .scalar_subquery()
            )
            spent = await connection.execute(
                update(refresh_tokens)
                .where(
                    refresh_tokens.c.token_hash == token_hash,
                    refresh_tokens.c.used_at.is_(None),
                    refresh_tokens.c.family_id == live_family,
                )
                .values(used_at=now)
            )
            if spent.rowcount != 1:
                return None
            await _insert_pair(connection, record.family_id, tokens, now)
            await audit.record(
                connection,
                tenant_key,
                Event.TOKENS_ISSUED,
                now,
                client_id=client_id,
                family_id=record.family_id,
                grant="refresh_token",
            )
        return record.scope

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
        return AccessRecord(*row)

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
        )
    )


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
