"""Company rows: read by tenant key, written by ``frontdesk companies apply``.

A row's secrets are sealed (company_secrets) as it is written, and opened with
``opened`` when the company is loaded; listing and showing rows never opens them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.config import DEV_DATA_KEY
from frontdesk.errors import FrontdeskError
from frontdesk.sealing.company_secrets import SecretsUnreadable, open_secrets, seal_secrets
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.store.database import for_reads
from frontdesk.store.tables import companies


class ApplyOutcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    # The same definition, its secrets sealed again under the first data key: they were in
    # clear (stored before sealing) or under an older key.
    RESEALED = "re-encrypted"


class CompanyChanged(FrontdeskError):
    """The company changed after the definition being written was read from it."""

    def __init__(self, tenant_key: str) -> None:
        super().__init__(
            f"company {tenant_key!r} was changed by another request meanwhile: read it again"
            " and make the change on what it is now"
        )


@dataclass(frozen=True, slots=True)
class StoredCompany:
    tenant_key: str
    # As stored: its secrets sealed (or in clear, in a row stored before sealing).
    definition: dict[str, Any]
    revision: int
    updated_at: datetime


class CompanyRepository:
    def __init__(self, engine: AsyncEngine, box: SecretBox | None = None) -> None:
        self._engine = engine
        self._reads = for_reads(engine)
        # The service and the CLI pass the box of FRONTDESK_DATA_KEYS; the development key
        # (which production refuses to start with) serves tests and tools.
        self._box = box if box is not None else SecretBox([DEV_DATA_KEY])

    def opened(self, stored: StoredCompany) -> dict[str, Any]:
        """The stored definition with its secrets in clear; SecretsUnreadable naming the
        company when they cannot be opened with the configured keys."""
        return open_secrets(stored.tenant_key, stored.definition, self._box)[0]

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

    async def apply(
        self,
        definitions: list[dict[str, Any]],
        *,
        read_at: Mapping[str, int | None] | None = None,
    ) -> dict[str, ApplyOutcome]:
        """Create or update every company in one transaction: all land, or none do.

        ``definitions`` hold their secrets in clear; each is sealed as it is written. A
        company is unchanged when its opened row equals its definition; one whose row
        holds secrets in clear or under an older key is sealed again (RESEALED), at the
        same revision since what it serves has not changed.

        ``read_at`` names, per tenant key, the revision a definition was made from (None:
        made while the company did not exist); CompanyChanged, and nothing written, when
        the stored company is no longer at it (another change came in between)."""
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
                if read_at is not None and key in read_at:
                    found = None if current is None else current.revision
                    if found != read_at[key]:
                        raise CompanyChanged(key)
                sealed = seal_secrets(key, definition, self._box)
                if current is None:
                    await connection.execute(
                        insert(companies).values(
                            tenant_key=key,
                            definition=sealed,
                            revision=1,
                            created_at=now,
                            updated_at=now,
                        )
                    )
                    outcomes[key] = ApplyOutcome.CREATED
                    continue
                opened: dict[str, Any] | None
                try:
                    opened, stale = open_secrets(key, current.definition, self._box)
                except SecretsUnreadable:
                    # Sealed under a key no longer configured (or altered): the file's
                    # secrets replace what cannot be read.
                    opened, stale = None, True
                if opened == definition and not stale:
                    outcomes[key] = ApplyOutcome.UNCHANGED
                    continue
                changed = opened != definition
                revision = current.revision + 1 if changed else current.revision
                await connection.execute(
                    update(companies)
                    .where(companies.c.tenant_key == key)
                    .values(definition=sealed, revision=revision, updated_at=now)
                )
                outcomes[key] = ApplyOutcome.UPDATED if changed else ApplyOutcome.RESEALED
        return outcomes
