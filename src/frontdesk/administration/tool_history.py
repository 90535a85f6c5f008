"""A company's tool version history, as operators and companies read it (`frontdesk tools
history`, ``GET /admin/v1/companies/{tenant}/tools/{name}/versions``): each version of each
tool as first served or consented to (store.tool_versions), oldest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.administration.company_state import UnknownCompany, UnknownTarget
from frontdesk.store.admin import Administration
from frontdesk.store.tool_versions import HistoryEntry, ToolVersionRepository


async def tool_history(
    engine: AsyncEngine, tenant_key: str, tool: str | None = None
) -> list[HistoryEntry]:
    """UnknownCompany for no such company; UnknownTarget for a tool never served."""
    if not await Administration(engine).company_exists(tenant_key):
        raise UnknownCompany(tenant_key)
    entries = await ToolVersionRepository(engine).history(tenant_key, tool)
    if tool is not None and not entries:
        raise UnknownTarget(f"company {tenant_key!r} has served no tool {tool!r}")
    return entries


def as_json(entry: HistoryEntry) -> dict[str, Any]:
    return {
        "tool": entry.tool,
        "version": entry.version,
        "definition_hash": entry.definition_hash,
        "first_seen_at": entry.first_seen_at.isoformat().replace("+00:00", "Z"),
    }
