"""Company rows: read by tenant key, written by ``frontdesk companies apply``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.database import for_reads
from frontdesk.store.tables import companies


class ApplyOutcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class StoredCompany:
    tenant_key: str
    definition: dict[str, Any]
    revision: int
    updated_at: datetime


class CompanyRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)

    async def get(self, tenant_key: str) -> StoredCompany | None:
        query = select(
            companies.c.tenant_key,
            companies.c.definition,
            companies.c.revision,
            companies.c.updated_at,
        ).where(companies.c.tenant_key == tenant_key)
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else StoredCompany(*row)

    async def all(self) -> list[StoredCompany]:
        query = select(
            companies.c.tenant_key,
            companies.c.definition,
            companies.c.revision,
            companies.c.updated_at,
        ).order_by(companies.c.tenant_key)
        async with self._reads.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [StoredCompany(*row) for row in rows]

    async def apply(self, definitions: list[dict[str, Any]]) -> dict[str, ApplyOutcome]:
        """Create or update every company in one transaction: all land, or none do."""
        now = datetime.now(UTC)
        outcomes: dict[str, ApplyOutcome] = {}
        async with self._engine.begin() as connection:
            for definition in definitions:
                key = definition["tenant_key"]
                current = (
                    await connection.execute(
                        select(companies.c.definition, companies.c.revision)
                        .where(companies.c.tenant_key == key)
                        .with_for_update()
                    )
                ).first()
                if current is None:
                    await connection.execute(
                        insert(companies).values(
                            tenant_key=key,
                            definition=definition,
                            revision=1,
                            created_at=now,
                            updated_at=now,
                        )
                    )
                    outcomes[key] = ApplyOutcome.CREATED
                elif current.definition == definition:
                    outcomes[key] = ApplyOutcome.UNCHANGED
                else:
                    await connection.execute(
                        update(companies)
                        .where(companies.c.tenant_key == key)
                        .values(
                            definition=definition,
                            revision=current.revision + 1,
                            updated_at=now,
                        )
                    )
                    outcomes[key] = ApplyOutcome.UPDATED
        return outcomes
