"""What the consent page tells the customer before they allow a client: who asks (named by
oauth.client_display, as the account page names it), what it will be able to do as them,
where they go next, and where they can take the access back.

"What it will be able to do" is the company's personal tools, the ones that act on the
customer's own account (interface 5.5), by the name MCP tells a person (MCP 2025-06-18,
``Tool``: ``title``, then ``annotations.title``, then ``name``). A tool that may change or
delete something is marked, by MCP's own defaults (``ToolAnnotations``: ``readOnlyHint``
false and ``destructiveHint`` true unless the company says otherwise): a tool the company
did not describe is marked, since nothing says it only reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from frontdesk.companies.catalog import ServedCompany, ServedTool
from frontdesk.oauth import account_completion
from frontdesk.oauth.client_display import client_display
from frontdesk.oauth.clients import KnownClient
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.pages import page
from frontdesk.oauth.scope_choice import (
    TOOL_SCOPES_FIELD,
    ScopeChoice,
    field_of,
    tool_scopes_asked,
)
from frontdesk.oauth.tool_consent import ChangedTool


@dataclass(frozen=True, slots=True)
class PersonalTool:
    title: str
    # May change or delete something of the customer's (MCP ToolAnnotations defaults).
    destructive: bool
    # Since the customer last allowed this client (oauth.tool_consent): "new", "changed".
    changed: str | None = None
    # The tool's own scope, which a grant must hold (companies.tool_scopes), if it has one.
    scope: str | None = None


def _title(tool: ServedTool) -> str:
    definition = tool.definition
    annotated = definition.annotations.title if definition.annotations else None
    return definition.title or annotated or definition.name


def may_destroy(tool: ServedTool) -> bool:
    """MCP ToolAnnotations: destructiveHint is meaningful only when readOnlyHint is false,
    and both default to the cautious answer (readOnlyHint false, destructiveHint true)."""
    annotations = tool.definition.annotations
    if annotations is None:
        return True
    if annotations.read_only_hint is True:
        return False
    return annotations.destructive_hint is not False


def personal_tools(
    company: ServedCompany, changed: tuple[ChangedTool, ...] = ()
) -> list[PersonalTool]:
    """The tools a signed-in client can use as the customer, in the catalog's order, each
    marked if it changed since the customer last allowed the client."""
    since = {tool.name: "new" if tool.new else "changed" for tool in changed}
    return [
        PersonalTool(_title(tool), may_destroy(tool), since.get(tool.name), tool.definition.scope)
        for tool in company.tools.values()
        if tool.is_personal
    ]


def scope_choices(tools: list[PersonalTool], asked: tuple[str, ...]) -> list[ScopeChoice]:
    """Each tool scope ``asked``, with the personal tools it opens (oauth.scope_choice)."""
    return [
        ScopeChoice(
            scope,
            field_of(scope),
            tuple(tool.title for tool in tools if tool.scope == scope),
            any(tool.destructive for tool in tools if tool.scope == scope),
        )
        for scope in asked
    ]


def consent_page(
    request: Request,
    services: OAuthServices,
    company: ServedCompany,
    client: KnownClient,
    flow: Flow,
    sealed: str,
    changed: tuple[ChangedTool, ...] = (),
) -> Response:
    redirect = urlsplit(flow.redirect_uri)
    issuer = services.settings.issuer(company.tenant_key)
    tools = personal_tools(company, changed)
    asked = tool_scopes_asked(company, flow.scope)
    return page(
        request,
        "consent.html",
        company_name=company.name,
        client=client_display(client.client_id, client.name),
        # The tools any grant reaches; those behind a scope of their own are the customer's
        # choice, each scope with its tools (oauth.scope_choice).
        tools=[tool for tool in tools if tool.scope is None],
        tools_changed=bool(changed),
        scope_choices=scope_choices(tools, asked),
        tool_scopes=" ".join(asked),
        tool_scopes_field=TOOL_SCOPES_FIELD,
        redirect_host=redirect.netloc or redirect.scheme,
        scopes=flow.scope.split(),
        flow=sealed,
        consent_url=f"{issuer}/consent",
        account_url=account_completion.page_url(services, company.tenant_key),
    )
