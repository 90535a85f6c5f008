"""The audit log: security events per company, recorded inside the transaction of the
change they describe, and read back by the operator."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Select, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store.database import for_reads
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import audit_events


class Event(StrEnum):
    CLIENT_REGISTERED = "client_registered"
    TOKENS_ISSUED = "tokens_issued"
    CODE_REPLAYED = "code_replayed"
    # A spent refresh token came back within its company's retry window (oauth.refresh):
    # the pair its rotation produced was answered again.
    REFRESH_RETRIED = "refresh_retried"
    REFRESH_REUSE_DETECTED = "refresh_reuse_detected"
    FAMILY_REVOKED = "family_revoked"
    # A customer took a tool scope back from a client on their account page
    # (store.grant_narrowing): the family keeps working with the rest.
    GRANT_NARROWED = "grant_narrowed"
    TOKEN_REVOKED = "token_revoked"  # noqa: S105 -- an event name, not a secret
    # The admin API (frontdesk.admin_api): a key of the company made or revoked, and each
    # request a key made about the company (an operator key's under the company touched).
    ADMIN_KEY_CREATED = "admin_key_created"
    ADMIN_KEY_REVOKED = "admin_key_revoked"
    ADMIN_REQUEST = "admin_request"
    # A change made in the console (frontdesk.console), by whom (a staff member's or an
    # operator's address) and what.
    CONSOLE_CHANGE = "console_change"


@dataclass(frozen=True, slots=True)
class AuditEvent:
    occurred_at: datetime
    event: str
    client_id: str | None
    family_id: int | None
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "occurred_at": self.occurred_at.isoformat(),
            "event": self.event,
            "client_id": self.client_id,
            "family_id": self.family_id,
            **self.detail,
        }


async def record(
    connection: AsyncConnection,
    tenant_key: str,
    event: Event,
    now: datetime,
    *,
    client_id: str | None = None,
    family_id: int | None = None,
    **detail: Any,
) -> None:
    """Add an event within the caller's transaction. Never pass a secret in ``detail``."""
    await connection.execute(
        insert(audit_events).values(
            tenant_key=tenant_key,
            occurred_at=now,
            event=event.value,
            client_id=client_id,
            family_id=family_id,
            detail=detail,
        )
    )


class AuditLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)

    async def list(
        self,
        tenant_key: str,
        *,
        since: datetime | None = None,
        events: list[str] | None = None,
        limit: int = 100,
        families: Select[tuple[int]] | None = None,
    ) -> list[AuditEvent]:
        """The company's events, newest first; only those about ``families`` (a query of
        family ids, e.g. one customer's: store.admin) when given."""
        table = audit_events.c
        query = (
            select(table.occurred_at, table.event, table.client_id, table.family_id, table.detail)
            .where(table.tenant_key == tenant_key)
            .order_by(table.occurred_at.desc(), table.id.desc())
            .limit(limit)
        )
        if families is not None:
            query = query.where(table.family_id.in_(families))
        if since is not None:
            query = query.where(table.occurred_at >= since)
        if events:
            query = query.where(table.event.in_(events))
        async with self._reads.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [
            AuditEvent(
                as_utc(row.occurred_at), row.event, row.client_id, row.family_id, dict(row.detail)
            )
            for row in rows
        ]
