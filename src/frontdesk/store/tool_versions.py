"""Tool versions as kept (migration 0014): each version of a company's tool as first seen,
and the sets of versions consents covered (snapshots), each named by its hash.

Both only grow, and a row never changes once written: a version or a snapshot is named by
the hash of what it holds, so whoever reads one may keep it for as long as it likes
(oauth.tool_consent does). Writing one that is there already is no error: two instances
recording the same consent, or a company applied twice, write it once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store.tables import tool_snapshots, tool_versions


@dataclass(frozen=True, slots=True)
class ToolVersion:
    tool: str
    version: str
    definition_hash: str
    # What the version hashes (companies.tool_versions.versioned_document).
    document: dict[str, Any]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    tool: str
    version: str
    definition_hash: str
    first_seen_at: datetime


async def _record_versions(
    connection: AsyncConnection, tenant_key: str, seen: Sequence[ToolVersion], now: datetime
) -> None:
    table = tool_versions.c
    keys = [(entry.tool, entry.version, entry.definition_hash) for entry in seen]
    found = await connection.execute(
        select(table.tool, table.version, table.definition_hash).where(
            table.tenant_key == tenant_key,
            tuple_(table.tool, table.version, table.definition_hash).in_(keys),
        )
    )
    known = {tuple(row) for row in found}
    new = [
        entry for entry in seen if (entry.tool, entry.version, entry.definition_hash) not in known
    ]
    if new:
        await connection.execute(
            insert(tool_versions),
            [
                {
                    "tenant_key": tenant_key,
                    "tool": entry.tool,
                    "version": entry.version,
                    "definition_hash": entry.definition_hash,
                    "document": entry.document,
                    "first_seen_at": now,
                }
                for entry in new
            ],
        )


async def _record_snapshot(
    connection: AsyncConnection, tenant_key: str, snapshot: str, versions: Mapping[str, str]
) -> None:
    known = await connection.execute(
        select(tool_snapshots.c.snapshot).where(
            tool_snapshots.c.tenant_key == tenant_key, tool_snapshots.c.snapshot == snapshot
        )
    )
    if known.first() is None:
        await connection.execute(
            insert(tool_snapshots).values(
                tenant_key=tenant_key,
                snapshot=snapshot,
                versions=dict(versions),
                created_at=datetime.now(UTC),
            )
        )


class ToolVersionRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def record(
        self,
        tenant_key: str,
        seen: Sequence[ToolVersion],
        snapshot: tuple[str, Mapping[str, str]] | None = None,
    ) -> None:
        """Record versions first seen now, and the snapshot a consent covers, if any."""
        if not seen and snapshot is None:
            return
        now = datetime.now(UTC)
        for attempt in (1, 2):
            try:
                async with self._engine.begin() as connection:
                    if seen:
                        await _record_versions(connection, tenant_key, seen, now)
                    if snapshot is not None:
                        await _record_snapshot(connection, tenant_key, *snapshot)
                return
            except IntegrityError:
                # Another instance recorded some of them first: the second try skips them.
                if attempt == 2:
                    raise

    async def snapshot(self, tenant_key: str, snapshot: str) -> dict[str, str] | None:
        """The versions a snapshot holds (tool name -> version), or None if unknown."""
        async with self._engine.connect() as connection:
            found = await connection.execute(
                select(tool_snapshots.c.versions).where(
                    tool_snapshots.c.tenant_key == tenant_key,
                    tool_snapshots.c.snapshot == snapshot,
                )
            )
            versions = found.scalar()
        return None if versions is None else {str(k): str(v) for k, v in versions.items()}

    async def documents(
        self, tenant_key: str, versions: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The documents of these (tool, version) pairs that were recorded."""
        pairs = list(versions)
        if not pairs:
            return {}
        table = tool_versions.c
        async with self._engine.connect() as connection:
            found = await connection.execute(
                select(table.tool, table.version, table.document).where(
                    table.tenant_key == tenant_key,
                    tuple_(table.tool, table.version).in_(pairs),
                )
            )
            return {(row.tool, row.version): dict(row.document) for row in found}

    async def history(self, tenant_key: str, tool: str | None = None) -> list[HistoryEntry]:
        """Every version recorded of the company's tools (or one tool), oldest first."""
        table = tool_versions.c
        query = select(table.tool, table.version, table.definition_hash, table.first_seen_at)
        query = query.where(table.tenant_key == tenant_key)
        if tool is not None:
            query = query.where(table.tool == tool)
        query = query.order_by(table.tool, table.first_seen_at, table.id)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [
            HistoryEntry(row.tool, row.version, row.definition_hash, _aware(row.first_seen_at))
            for row in rows
        ]


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive timestamps; they were written in UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
