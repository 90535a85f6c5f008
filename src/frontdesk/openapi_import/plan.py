"""An import as a change to one company's tools: the diff, and applying it.

An import has a ``source`` (the document's ``info.title`` unless named): its tools carry it
in their provider, and a later import with the same source replaces exactly those. Tools
written by hand, and those of other imports, are never changed or removed; an imported name
that one of them already has is refused, naming it. What the company chose for an imported
tool after the import (``KEPT_ON_REIMPORT``: its timeout, whether it is served, what it
needs of the client) is kept when the same tool is imported again.

Applying is ``companies apply`` for the one company: the new definition passes the same
validation (``companies.files.parse_companies``; in production ``production_problems``) and
is written by the same repository call, in one transaction. A dry run stops before writing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frontdesk.administration.company_state import UnknownCompany
from frontdesk.companies.definition import ToolDefinition
from frontdesk.companies.files import parse_companies
from frontdesk.companies.production import production_problems
from frontdesk.errors import ConfigurationError
from frontdesk.openapi_import import ImportRefused
from frontdesk.openapi_import.document import validated
from frontdesk.openapi_import.operations import tools_of
from frontdesk.openapi_import.schemas import SchemaConverter, resolver_for
from frontdesk.store.companies import CompanyRepository

KEPT_ON_REIMPORT = ("timeout", "enabled", "required_client_capabilities")


@dataclass(frozen=True, slots=True)
class ImportRequest:
    document: dict[str, Any]
    base_url: str
    # Operation ids or tags; none: every operation.
    include: tuple[str, ...] = ()
    source: str | None = None
    # Per operationId (or tool name): annotations that win over the method's and the
    # document's.
    annotations: dict[str, dict[str, Any]] = field(default_factory=dict)
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class ImportPlan:
    tenant_key: str
    source: str
    added: list[str]
    changed: list[str]
    removed: list[str]
    unchanged: list[str]
    # Whether the company's definition was written (never on a dry run, nor when nothing
    # changed).
    applied: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "tenant_key": self.tenant_key,
            "source": self.source,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "applied": self.applied,
        }


async def import_openapi(
    repository: CompanyRepository,
    tenant_key: str,
    request: ImportRequest,
    *,
    production: bool = False,
) -> ImportPlan:
    """The diff of importing ``request`` into the company's tools, applied unless a dry
    run. UnknownCompany when there is no such company; ImportRefused or ConfigurationError
    naming what is wrong, nothing written."""
    stored = await repository.get(tenant_key)
    if stored is None:
        raise UnknownCompany(tenant_key)
    current = repository.opened(stored)
    tools, source = imported_tools(request)
    new_tools, added, changed, removed, unchanged = merge(current.get("tools", []), tools, source)
    definition = {**current, "tools": new_tools}
    try:
        parsed = parse_companies({"companies": [definition]})
    except ConfigurationError as error:
        raise ImportRefused(f"the imported tools do not validate: {error}") from None
    company = parsed.companies[0]
    if production:
        problems = production_problems(company)
        if problems:
            raise ImportRefused("not for production: " + "; ".join(problems))
    changes = bool(added or changed or removed)
    if changes and not request.dry_run:
        await repository.apply([company.model_dump(mode="json", by_alias=True)])
    return ImportPlan(
        tenant_key,
        source,
        added,
        changed,
        removed,
        unchanged,
        applied=changes and not request.dry_run,
    )


def imported_tools(request: ImportRequest) -> tuple[list[dict[str, Any]], str]:
    """The tools the document describes, and the import's source."""
    document = request.document
    version = validated(document)
    info = document.get("info") or {}
    source = request.source or str(info.get("title") or "").strip()
    if not source:
        raise ImportRefused('name the import (source): the document\'s info has no "title"')
    converter = SchemaConverter(resolver_for(document), version)
    tools = tools_of(
        document,
        converter,
        base_url=request.base_url,
        source=source,
        include=request.include,
        annotations=request.annotations,
    )
    if not tools:
        raise ImportRefused("the document describes no operation")
    return tools, source


def _from_source(tool: Any, source: str) -> bool:
    provider = tool.get("provider") if isinstance(tool, dict) else None
    return (
        isinstance(provider, dict)
        and provider.get("type") == "openapi"
        and provider.get("source") == source
    )


def merge(
    current: list[dict[str, Any]], imported: list[dict[str, Any]], source: str
) -> tuple[list[dict[str, Any]], list[str], list[str], list[str], list[str]]:
    """The company's new tools, and the names added, changed, removed and unchanged."""
    ours = {tool["name"]: tool for tool in current if _from_source(tool, source)}
    others = [tool for tool in current if not _from_source(tool, source)]
    taken = {tool.get("name") for tool in others}
    clashes = sorted(tool["name"] for tool in imported if tool["name"] in taken)
    if clashes:
        raise ImportRefused(
            f"the company already has tools named {clashes} that are not from the import"
            f" {source!r}; rename them first, or import only other operations (include)"
        )
    added: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    merged: list[dict[str, Any]] = []
    for tool in imported:
        before = ours.get(tool["name"])
        if before is None:
            added.append(tool["name"])
            merged.append(tool)
            continue
        kept = {key: before[key] for key in KEPT_ON_REIMPORT if key in before}
        tool = {**tool, **kept}
        (unchanged if _normal(tool) == _normal(before) else changed).append(tool["name"])
        merged.append(tool)
    names = {tool["name"] for tool in imported}
    removed = [name for name in ours if name not in names]
    return others + merged, added, changed, removed, unchanged


def _normal(tool: dict[str, Any]) -> Any:
    """A tool as the store keeps it, so a stored tool and its re-import compare alike."""
    try:
        return ToolDefinition.model_validate(tool).model_dump(mode="json", by_alias=True)
    except ValueError:
        return tool
