"""Authorization codes (RFC 6749 4.1): saved at consent, found and spent once at the token
endpoint, and a spent code that comes back revokes what it issued (RFC 6749 4.1.2).

Spending is one conditional UPDATE, and the token family it starts is written in the same
transaction: of many concurrent redemptions exactly one wins and none half-issues.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.families import insert_pair, revoke_family_in
from frontdesk.store.grant_records import CodeRecord, Ending, NewTokens
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import authorization_codes, token_families


class CodeGrants:
    """The codes part of store.grants.GrantRepository."""

    _engine: AsyncEngine
    _reads: AsyncEngine

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
                    tool_snapshot=record.tool_snapshot,
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
            table.tool_snapshot,
        ).where(table.code_hash == code_hash, table.tenant_key == tenant_key)
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        return CodeRecord(*row[:6], as_utc(row.expires_at), row.used_at, row.tool_snapshot)

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
                    tool_snapshot=record.tool_snapshot,
                )
                .returning(token_families.c.id)
            )
            family_id = int(family.scalar_one())
            await insert_pair(connection, family_id, tokens, now)
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

    async def revoke_code_grants(
        self, tenant_key: str, code_hash: str, now: datetime, ending: Ending
    ) -> None:
        """A spent code came back: end every live family it started (RFC 6749 4.1.2), each
        as any family ends (store.families), as ``ending`` says."""
        async with self._engine.begin() as connection:
            await audit.record(connection, tenant_key, Event.CODE_REPLAYED, now)
            started = await connection.execute(
                select(token_families.c.id).where(
                    token_families.c.code_hash == code_hash,
                    token_families.c.tenant_key == tenant_key,
                    token_families.c.revoked_at.is_(None),
                )
            )
            for family_id in started.scalars().all():
                await revoke_family_in(
                    connection,
                    int(family_id),
                    now,
                    ending.reason,
                    forget_consent=ending.forgets_consent,
                )
