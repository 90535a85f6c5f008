"""The customer's steps between the consent page and the company's login: the consent
form's answer, and the ``dev`` login's own form (for trials; production refuses it)."""

from __future__ import annotations

from dataclasses import replace

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from frontdesk.login.connector import LoginFailed
from frontdesk.login.dev import DevLogin
from frontdesk.oauth import browser
from frontdesk.oauth.completion import back_to_client, signed_in
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.forms import read_form
from frontdesk.oauth.pages import page
from frontdesk.oauth.rendering import NO_STORE
from frontdesk.oauth.scope_choice import narrowed
from frontdesk.observability import metrics

log = structlog.get_logger(__name__)


async def to_login(
    services: OAuthServices, signin: SigninCompany, flow: Flow, sealed: str
) -> Response:
    """The customer allowed the client (now, or at an earlier sign-in: oauth.remembered): on
    to the company's login, or back to the client when that login cannot be reached."""
    try:
        connector = services.logins.for_company(flow.tenant_key, signin.setup)
        destination = await connector.begin(browser.attempt(services, flow, sealed))
    except LoginFailed as failure:
        log.warning("login_unavailable", tenant=flow.tenant_key, reason=str(failure))
        metrics.signin_failed(flow.tenant_key, "provider_unavailable")
        return back_to_client(
            services, flow, error="temporarily_unavailable", description=str(failure)
        )
    return RedirectResponse(destination, status_code=303, headers=NO_STORE)


class ConsentAndLogin:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services

    async def consent(self, request: Request) -> Response:
        services = self._services
        signin = await services.signin_company(request, page=True)
        form = await read_form(request)
        flow = browser.open_flow(services, request, signin, form.get("flow"))
        sealed = form["flow"]
        if form.get("decision") != "allow":
            metrics.signin_failed(flow.tenant_key, "denied")
            return back_to_client(
                services, flow, error="access_denied", description="the customer denied the request"
            )
        chosen = narrowed(flow.scope, form)
        if not chosen:
            metrics.signin_failed(flow.tenant_key, "denied")
            return back_to_client(
                services,
                flow,
                error="access_denied",
                description="the customer allowed none of the scopes asked for",
            )
        if chosen != flow.scope:
            # Only the tool scopes the customer left ticked (oauth.scope_choice), sealed
            # again: every later step reads the flow, and the code is issued for it.
            flow = replace(flow, scope=chosen)
            sealed = services.flows.seal(flow)
        return await to_login(services, signin, flow, sealed)

    async def login_form(self, request: Request) -> Response:
        services = self._services
        signin = await services.signin_company(request, page=True)
        sealed = request.query_params.get("flow")
        browser.open_flow(services, request, signin, sealed)
        self._dev_login(signin)
        return self._login_page(request, signin, sealed or "")

    async def login_submit(self, request: Request) -> Response:
        services = self._services
        signin = await services.signin_company(request, page=True)
        form = await read_form(request)
        flow = browser.open_flow(services, request, signin, form.get("flow"))
        connector = self._dev_login(signin)
        try:
            identity = await connector.complete(browser.attempt(services, flow, form["flow"]), form)
        except LoginFailed as failure:
            return self._login_page(
                request,
                signin,
                form["flow"],
                problem=str(failure),
                email=form.get("email", ""),
                name=form.get("name", ""),
            )
        return await signed_in(services, flow, identity)

    def _dev_login(self, signin: SigninCompany) -> DevLogin:
        try:
            connector = self._services.logins.for_company(signin.tenant_key, signin.setup)
        except LoginFailed as failure:
            raise AuthorizePage(404, "Sign-in is not available", str(failure)) from None
        if not isinstance(connector, DevLogin):
            raise AuthorizePage(404, "Not found", "This company signs customers in elsewhere.")
        return connector

    def _login_page(
        self, request: Request, signin: SigninCompany, sealed: str, **extra: str
    ) -> Response:
        return page(
            request,
            "login.html",
            company_name=signin.company.name,
            flow=sealed,
            login_url=f"{self._services.settings.issuer(signin.tenant_key)}/login",
            problem=extra.get("problem"),
            email=extra.get("email", ""),
            name=extra.get("name", ""),
        )
