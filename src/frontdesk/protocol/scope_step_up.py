"""A signed-in call to a tool whose own scope the grant lacks (companies.tool_scopes): the
step-up challenge, as a tool that changed since consent answers (oauth.tool_consent).

The whole response becomes a 401 with ``WWW-Authenticate: Bearer error="insufficient_scope",
scope="..."`` (RFC 6750 3.1; MCP 2025-11-25 authorization, "Scope Challenge Handling"), and
the tool's result carries the same challenge in ``_meta["mcp/www_authenticate"]`` (SEP-1489,
where MCP 2026-07-28 clients and ChatGPT read it). The ``scope`` names what the grant
holds and the one the tool needs: a client that signs in again with it asks the customer
for that scope without losing the others (the consent page shows it, ticked).
"""

from __future__ import annotations

from frontdesk.companies.catalog import ServedTool
from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.domain import Customer
from frontdesk.protocol.bearer import Challenges
from frontdesk.protocol.context import RequestContext
from frontdesk.tools.provider import ToolResult

# Challenges per (resource metadata, scopes held, scope needed): a handful per company, as
# grants share a handful of scope texts; cleared when it grows past this.
KEPT = 256
_kept: dict[tuple[str, str, str], str] = {}


def challenge(challenges: Challenges, held: str, needed: str) -> str:
    """The step-up challenge asking for the scopes ``held`` (space-separated) and ``needed``."""
    key = (challenges.where, held, needed)
    found = _kept.get(key)
    if found is None:
        if len(_kept) >= KEPT:
            _kept.clear()
        scope = f"{held} {needed}" if held else needed
        found = _kept[key] = (
            f'{challenges.where}, error="insufficient_scope",'
            f' error_description="This tool needs the scope {needed}", scope="{scope}"'
        )
    return found


def step_up(
    context: RequestContext, tool: ServedTool, customer: Customer, needed: str
) -> ToolResult:
    """The refusal of a call whose grant lacks ``needed``, and the 401 it makes."""
    challenges = context.sign_in
    if challenges is None:  # a company without sign-in has no signed-in callers
        return ToolResult.text(f"{tool.name} is not available here.", is_error=True)
    company = context.company
    # The grant's scopes in the company's order, then the one needed.
    offered = company_scopes(company).offered
    held = " ".join(scope for scope in offered if scope in customer.scopes)
    text = challenge(challenges, held, needed)
    context.www_authenticate = text
    return ToolResult(
        content=[
            {
                "type": "text",
                "text": f"{tool.name} needs your permission for {needed} at {company.name}:"
                " allow it to use this tool.",
            }
        ],
        is_error=True,
        meta={"mcp/www_authenticate": [text]},
    )
