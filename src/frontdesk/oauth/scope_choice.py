"""The customer's choice among a company's tool scopes (companies.tool_scopes): on the
consent page, each scope asked for is shown with the tools it opens, ticked, and the
customer may untick it; on the account page, an allowed scope may be taken back.

Only ever narrowing: what the customer unticks is taken out of what the client asked for
(and was offered), and nothing the form says can add a scope. A form without the list of
scopes it showed (``TOOL_SCOPES_FIELD``) takes nothing out: the page always sends it, so
only a client posting the form itself, as the consent page was before tools had scopes,
leaves it out. The service's own scopes (``profile``, ``email``) are not the customer's to
untick here: they say what tools see of the customer, and a grant holds them as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from frontdesk import scopes
from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.tool_scopes import company_scopes

# The form's list of the tool scopes it shows, space-separated.
TOOL_SCOPES_FIELD = "tool_scopes"


def field_of(scope: str) -> str:
    """The name of a scope's checkbox (present, whatever its value, when ticked)."""
    return f"scope:{scope}"


@dataclass(frozen=True, slots=True)
class ScopeChoice:
    scope: str
    field: str
    # What the page says the scope opens: each tool's title, in the catalog's order.
    titles: tuple[str, ...]
    # Whether one of those tools may change or delete something.
    destructive: bool


def tool_scopes_asked(company: ServedCompany, scope: str) -> tuple[str, ...]:
    """The company's tool scopes in ``scope`` (a grant's or a flow's), in its order."""
    asked = set(scope.split())
    return tuple(item for item in company_scopes(company).of_tools if item in asked)


def narrowed(scope: str, form: Mapping[str, str]) -> str:
    """``scope`` without the tool scopes the form showed and the customer unticked."""
    shown = set(form.get(TOOL_SCOPES_FIELD, "").split()) - scopes.SUPPORTED_SET
    unticked = {item for item in shown if field_of(item) not in form}
    return " ".join(item for item in scope.split() if item not in unticked)
