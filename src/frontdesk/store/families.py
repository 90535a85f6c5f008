"""Token families: the pair of tokens each grant step writes into one, whether one is
still live, and its revocation with the audit events it records. Each runs in the
transaction of the grant step that calls it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncConnection

from frontdesk.store import audit, consents
from frontdesk.store.audit import Event
from frontdesk.store.grant_records import NewTokens
from frontdesk.store.tables import (
    KEPT_SUCCESSOR,
    access_tokens,
    refresh_tokens,
    token_families,
)


async def insert_access(
    connection: AsyncConnection, family_id: int, tokens: NewTokens, now: datetime
) -> None:
    """The access token of ``tokens``, in ``family_id``."""
    await connection.execute(
        insert(access_tokens).values(
            token_hash=tokens.access_hash,
            family_id=family_id,
            expires_at=tokens.access_expires_at,
            created_at=now,
        )
    )


async def insert_pair(
    connection: AsyncConnection, family_id: int, tokens: NewTokens, now: datetime
) -> None:
    await insert_access(connection, family_id, tokens, now)
    await connection.execute(
        insert(refresh_tokens).values(
            token_hash=tokens.refresh_hash,
            family_id=family_id,
            expires_at=tokens.refresh_expires_at,
            created_at=now,
            access_hash=tokens.access_hash,
        )
    )


async def forget_kept_successors(connection: AsyncConnection, family_id: int) -> None:
    """A revoked family's refresh retries are over: the pairs kept sealed for them go."""
    await connection.execute(
        update(refresh_tokens)
        .where(refresh_tokens.c.family_id == family_id, KEPT_SUCCESSOR)
        .values(successor_sealed=None)
    )


async def revoke_family_in(
    connection: AsyncConnection,
    family_id: int,
    now: datetime,
    reason: str,
    *,
    forget_consent: bool = False,
) -> None:
    """End the family if it is still live, and record why; with ``forget_consent`` (the OAuth
    side's decision: grant_records.Ending) the customer's remembered consent to its client
    goes in the same transaction."""
    revoked = await connection.execute(
        update(token_families)
        .where(token_families.c.id == family_id, token_families.c.revoked_at.is_(None))
        .values(revoked_at=now)
        .returning(
            token_families.c.tenant_key, token_families.c.client_id, token_families.c.customer_id
        )
    )
    for tenant_key, client_id, customer_id in revoked.all():
        await forget_kept_successors(connection, family_id)
        if forget_consent:
            await consents.forget(connection, tenant_key, int(customer_id), client_id)
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
