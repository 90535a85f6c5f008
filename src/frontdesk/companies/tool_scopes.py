"""The scopes a company offers: the service's own (frontdesk.scopes) and those its tools
name (``scope: orders:cancel``, companies.tool_terms), with the tools each one opens.

Worked out once per loaded company, when first asked, and kept beside it: a company is
replaced by a new ``ServedCompany`` when its definition changes, and what is kept here
goes with the old one.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from frontdesk import scopes
from frontdesk.companies.catalog import ServedCompany, ServedTool


@dataclass(frozen=True, slots=True)
class CompanyScopes:
    # Every scope a grant of this company may hold: the service's, then the tools' own in
    # the order the tools first name them.
    offered: tuple[str, ...]
    # The tools' own: the ones a customer may untick (frontdesk.oauth.scope_choice).
    of_tools: tuple[str, ...]
    # The personal tools each of the tools' scopes opens, in the catalog's order.
    tools_of: dict[str, tuple[ServedTool, ...]]

    @property
    def text(self) -> str:
        """What a challenge's ``scope`` names (RFC 6750 3): every offered scope."""
        return " ".join(self.offered)


_KEPT: WeakKeyDictionary[ServedCompany, CompanyScopes] = WeakKeyDictionary()


def company_scopes(company: ServedCompany) -> CompanyScopes:
    kept = _KEPT.get(company)
    if kept is None:
        kept = _KEPT[company] = _work_out(company)
    return kept


def _work_out(company: ServedCompany) -> CompanyScopes:
    served = company.tools.values()
    of_tools = tuple(
        dict.fromkeys(tool.definition.scope for tool in served if tool.definition.scope)
    )
    tools_of = {
        scope: tuple(tool for tool in served if tool.definition.scope == scope)
        for scope in of_tools
    }
    return CompanyScopes((*scopes.SUPPORTED, *of_tools), of_tools, tools_of)


def scope_needed(tool: ServedTool, granted: frozenset[str]) -> str | None:
    """The scope of its own a tool needs and a grant lacks, or None: a tool without one is
    open to any grant, as every tool was before tools had scopes."""
    needed = tool.definition.scope
    if needed is None or needed in granted:
        return None
    return needed
