"""Which tools a grant must ask the customer about again, because they changed since the
customer allowed the client (issue 33: tool change control; OWASP MCP Top 10, "rug pull").

A consent covers the version of each personal tool the company served when the customer
allowed the client (companies.tool_versions): recorded as a snapshot on the consent, the
code and the grant it starts (store.tool_versions). A grant's call to a personal tool that
is new since, or whose change widens what it does, gets the step-up challenge instead
(protocol.tool_calls) until the customer allows the client again; every other tool keeps
answering, and a change that only narrows a tool asks nothing.

What a grant must be asked about is worked out once per grant's snapshot and company as
loaded, and kept with that company: the catalog is rebuilt when the company changes, and
the answer with it. A grant whose snapshot is the company's current one, the common case,
costs a comparison of two strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.tool_versions import seen_versions, versioned_document, widens
from frontdesk.store.tool_versions import HistoryEntry, ToolVersionRepository

NOTHING: frozenset[str] = frozenset()
# Snapshots judged per company as loaded: grants share a handful (one per change since).
SNAPSHOTS_KEPT = 256


@dataclass(frozen=True, slots=True)
class ChangedTool:
    """A personal tool that asks again: ``new`` since the consent, or changed."""

    name: str
    new: bool


class ToolConsent:
    def __init__(self, engine: AsyncEngine) -> None:
        self._versions = ToolVersionRepository(engine)
        self._judged: WeakKeyDictionary[ServedCompany, dict[str, tuple[ChangedTool, ...]]] = (
            WeakKeyDictionary()
        )

    @property
    def versions(self) -> ToolVersionRepository:
        return self._versions

    async def record_consent(self, company: ServedCompany) -> str:
        """Record what a consent given now covers (each personal tool's version) and return
        the snapshot's name, to keep on the consent, the code and the grant."""
        personal = [tool.definition for tool in company.tools.values() if tool.is_personal]
        snapshot = (company.consent_snapshot, company.personal_versions)
        await self._versions.record(company.tenant_key, seen_versions(personal), snapshot)
        return company.consent_snapshot

    async def asking(self, company: ServedCompany, snapshot: str | None) -> frozenset[str]:
        """The names of the personal tools that must ask a grant of ``snapshot`` again."""
        if snapshot is None or snapshot == company.consent_snapshot:
            return NOTHING
        return frozenset(changed.name for changed in await self.changed(company, snapshot))

    async def changed(
        self, company: ServedCompany, snapshot: str | None
    ) -> tuple[ChangedTool, ...]:
        """The personal tools that changed, in a way that asks again, since ``snapshot``."""
        if snapshot is None or snapshot == company.consent_snapshot:
            return ()
        judged = self._judged.setdefault(company, {})
        found = judged.get(snapshot)
        if found is None:
            found = await self._judge(company, snapshot)
            if len(judged) >= SNAPSHOTS_KEPT:
                judged.clear()
            judged[snapshot] = found
        return found

    async def history(self, tenant_key: str, tool: str | None = None) -> list[HistoryEntry]:
        return await self._versions.history(tenant_key, tool)

    async def _judge(self, company: ServedCompany, snapshot: str) -> tuple[ChangedTool, ...]:
        tenant_key = company.tenant_key
        allowed = await self._versions.snapshot(tenant_key, snapshot) or {}
        differing = {
            name: allowed.get(name)
            for name, version in company.personal_versions.items()
            if allowed.get(name) != version
        }
        before: dict[tuple[str, str], dict[str, Any]] = await self._versions.documents(
            tenant_key, [(name, old) for name, old in differing.items() if old is not None]
        )
        changed: list[ChangedTool] = []
        for name, old in differing.items():
            if old is None:
                changed.append(ChangedTool(name, new=True))
                continue
            document = before.get((name, old))
            now = versioned_document(company.tools[name].definition)
            # A version whose document was never recorded cannot be judged: asked again.
            if document is None or widens(document, now):
                changed.append(ChangedTool(name, new=False))
        return tuple(changed)
