"""``/v1/{tenantKey}/account``: the customer's own page. Signed in through the company's
login (account.signin), it lists the assistants connected to their account and cuts one
off, ending every token family the customer's grants gave it (store.connected_clients).

Every form is checked twice against cross-site requests (account.guard): the session's
CSRF token and the request's origin. Errors are AuthorizePage, rendered as every sign-in
page's (oauth.rendering).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from frontdesk.account import signin
from frontdesk.account.guard import from_own_page, own_origin
from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.limits.ratelimit import parse_rate_limit
from frontdesk.oauth import account_completion
from frontdesk.oauth import account_session as session
from frontdesk.oauth.account_session import AccountSession
from frontdesk.oauth.client_display import client_display
from frontdesk.oauth.client_document_rules import is_client_document_url
from frontdesk.oauth.client_documents import ClientDocumentProblem
from frontdesk.oauth.consent_page import personal_tools, scope_choices
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.forms import read_form
from frontdesk.oauth.pages import page
from frontdesk.oauth.rendering import NO_STORE
from frontdesk.oauth.scope_choice import TOOL_SCOPES_FIELD, field_of, tool_scopes_asked
from frontdesk.store.connected_clients import ConnectedClient, ConnectedClients
from frontdesk.store.grant_narrowing import NothingLeft
from frontdesk.store.tables import CLIENT_ID_LENGTH

log = structlog.get_logger(__name__)


def _refused() -> AuthorizePage:
    return AuthorizePage(
        403,
        "This request was refused",
        "It did not come from your account page. Open the page again and retry there.",
    )


def _client_id(form: dict[str, str]) -> str:
    client_id = form.get("client_id", "")
    if not client_id or len(client_id) > CLIENT_ID_LENGTH or "\x00" in client_id:
        raise AuthorizePage(400, "Nothing to change", "Choose an assistant on your page.")
    return client_id


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%d %b %Y, %H:%M UTC")


def _entry(
    connected: ConnectedClient, claimed_name: str | None, company: ServedCompany | None = None
) -> dict[str, Any]:
    """What the page shows of one client: named as the consent page named it, and the
    tool scopes of ``company`` it holds, each of which the customer may take back
    (oauth.scope_choice)."""
    shown = client_display(connected.client_id, claimed_name)
    held = () if company is None else tool_scopes_asked(company, " ".join(connected.scopes))
    return {
        "scope_choices": [] if company is None else scope_choices(personal_tools(company), held),
        "tool_scopes": " ".join(held),
        "client_id": connected.client_id,
        "name": shown.name,
        "shown": shown,
        "scopes": connected.scopes,
        "allowed_at": _when(connected.allowed_at),
        "last_used_at": _when(connected.last_used_at),
    }


class AccountPage:
    def __init__(self, services: OAuthServices, connected: ConnectedClients) -> None:
        self._services = services
        self._connected = connected
        self._sessions = session.sessions_for(tuple(services.settings.secret_keys))
        self._origin = own_origin(services.settings.base_url)
        self._limit = parse_rate_limit(services.settings.oauth_rate_limit)

    async def show(self, request: Request) -> Response:
        signin_company = await self._services.signin_company(request, page=True)
        current = self._session(request, signin_company)
        holder = None
        if current is not None:
            holder = await self._connected.holder(current.tenant_key, current.customer_id)
        if current is None or holder is None:
            return self._page(request, signin_company, signed_in=False)
        connected = await self._connected.connected(
            current.tenant_key, current.customer_id, datetime.now(UTC)
        )
        names = await self._claimed_names(signin_company, connected)
        return self._page(
            request,
            signin_company,
            signed_in=True,
            holder=holder.name or holder.email or "you",
            clients=[
                _entry(client, name, signin_company.company)
                for client, name in zip(connected, names, strict=True)
            ],
            csrf=self._sessions.csrf_token(current),
            changed_tools=await self._changed_tools(
                signin_company.company, current.customer_id, connected
            ),
        )

    async def _changed_tools(
        self, company: ServedCompany, customer_id: int, connected: list[ConnectedClient]
    ) -> dict[str, list[str]]:
        """Per client, the titles of the tools that changed since the customer last allowed
        it and ask it again before they answer (oauth.tool_consent)."""
        services = self._services
        changed_tools: dict[str, list[str]] = {}
        for client in connected:
            snapshot = await services.consents.tool_snapshot(
                company.tenant_key, customer_id, client.client_id
            )
            changed = await services.tool_consent.changed(company, snapshot)
            if changed:
                tools = personal_tools(company, changed)
                changed_tools[client.client_id] = [tool.title for tool in tools if tool.changed]
        return changed_tools

    async def _claimed_names(
        self, signin_company: SigninCompany, connected: list[ConnectedClient]
    ) -> list[str | None]:
        """The name each client chose. Nothing is stored of a metadata-document client
        (oauth.clients): its name is its document's, fetched as sign-ins fetch it (kept in
        memory, each fetch bounded, a document whose host is down served from the cache),
        and left out when it cannot be had: the page names such a client by its host."""

        async def claimed(client: ConnectedClient) -> str | None:
            if not is_client_document_url(client.client_id):
                return client.registered_name
            try:
                known = await self._services.clients.find(
                    signin_company.tenant_key, client.client_id, signin_company.setup
                )
            except ClientDocumentProblem:
                return None
            return None if known is None else known.name

        return list(await asyncio.gather(*(claimed(client) for client in connected)))

    async def sign_in(self, request: Request) -> Response:
        services = self._services
        # Each sign-in may cost a round trip to the company's login (its metadata).
        await self._count(request)
        return await signin.begin(services, await services.signin_company(request, page=True))

    async def revoke(self, request: Request) -> Response:
        services = self._services
        await self._count(request)
        signin_company = await services.signin_company(request, page=True)
        current, form = await self._checked_form(request, signin_company)
        client_id = _client_id(form)
        ended = await self._connected.revoke(
            current.tenant_key, current.customer_id, client_id, datetime.now(UTC)
        )
        log.info("account_client_revoked", tenant=current.tenant_key, families=ended)
        return self._back(signin_company)

    async def narrow(self, request: Request) -> Response:
        """Take back the tool scopes the customer unticked; the client's tokens keep
        working with the rest (store.grant_narrowing). Never widens: only scopes the form
        showed and the company offers can be taken, and nothing is ever added."""
        services = self._services
        await self._count(request)
        signin_company = await services.signin_company(request, page=True)
        current, form = await self._checked_form(request, signin_company)
        client_id = _client_id(form)
        offered = set(company_scopes(signin_company.company).of_tools)
        shown = [scope for scope in form.get(TOOL_SCOPES_FIELD, "").split() if scope in offered]
        taken = frozenset(scope for scope in shown if field_of(scope) not in form)
        if taken:
            try:
                narrowed = await self._connected.narrow(
                    current.tenant_key, current.customer_id, client_id, taken, datetime.now(UTC)
                )
            except NothingLeft:
                raise AuthorizePage(
                    400,
                    "Nothing would be left",
                    "This assistant would be allowed nothing at all. To cut it off, use"
                    " Remove access on your account page.",
                ) from None
            log.info("account_client_narrowed", tenant=current.tenant_key, families=narrowed)
        return self._back(signin_company)

    async def sign_out(self, request: Request) -> Response:
        signin_company = await self._services.signin_company(request, page=True)
        await self._checked_form(request, signin_company)
        response = self._back(signin_company)
        session.end(response, signin_company.tenant_key)
        return response

    def _session(self, request: Request, signin_company: SigninCompany) -> AccountSession | None:
        return self._sessions.open(
            request.cookies.get(session.COOKIE_NAME), signin_company.tenant_key
        )

    async def _count(self, request: Request) -> None:
        """Counts a request against the page's limit, per company and address."""
        services = self._services
        await services.limit(
            request,
            self._limit,
            "account",
            request.path_params["tenant"],
            services.address(request),
        )

    async def _checked_form(
        self, request: Request, signin_company: SigninCompany
    ) -> tuple[AccountSession, dict[str, str]]:
        """The session and the form, when the form came from this session's own page."""
        if not from_own_page(request, self._origin):
            raise _refused()
        current = self._session(request, signin_company)
        if current is None:
            raise AuthorizePage(
                401, "You are signed out", "Your session ended. Open your account page again."
            )
        form = await read_form(request)
        if not self._sessions.csrf_matches(current, form.get("csrf")):
            raise _refused()
        return current, form

    def _back(self, signin_company: SigninCompany) -> Response:
        # 303: the browser loads the page again with GET (post/redirect/get).
        url = account_completion.page_url(self._services, signin_company.tenant_key)
        return RedirectResponse(url, status_code=303, headers=NO_STORE)

    def _page(self, request: Request, signin_company: SigninCompany, **context: Any) -> Response:
        base = account_completion.page_url(self._services, signin_company.tenant_key)
        return page(
            request,
            "account.html",
            company_name=signin_company.company.name,
            signin_url=f"{base}/signin",
            revoke_url=f"{base}/revoke",
            narrow_url=f"{base}/narrow",
            tool_scopes_field=TOOL_SCOPES_FIELD,
            signout_url=f"{base}/signout",
            **context,
        )


def account_routes(services: OAuthServices, connected: ConnectedClients) -> list[Route]:
    account = AccountPage(services, connected)
    return [
        Route("/v1/{tenant}/account", account.show, methods=["GET"]),
        Route("/v1/{tenant}/account/signin", account.sign_in, methods=["GET"]),
        Route("/v1/{tenant}/account/revoke", account.revoke, methods=["POST"]),
        Route("/v1/{tenant}/account/narrow", account.narrow, methods=["POST"]),
        Route("/v1/{tenant}/account/signout", account.sign_out, methods=["POST"]),
    ]
