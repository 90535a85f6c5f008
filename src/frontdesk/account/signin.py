"""Signing in to the account page: the same sign-in a client's authorization runs (the
company's login connector, the flow sealed and bound to the browser, spent by its callback,
oauth.flow), marked as the account's, so that it ends with the page's session instead of
a code for a client (oauth.completion hands it here)."""

from __future__ import annotations

import structlog
from starlette.responses import RedirectResponse, Response

from frontdesk.account import session
from frontdesk.login.connector import LoginFailed
from frontdesk.oauth import browser
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.rendering import NO_STORE

log = structlog.get_logger(__name__)


def page_url(services: OAuthServices, tenant_key: str) -> str:
    return f"{services.settings.base_url}{session.cookie_path(tenant_key)}"


async def begin(services: OAuthServices, signin: SigninCompany) -> Response:
    """Send the customer to the company's login, bound to this browser as any sign-in."""
    tenant_key = signin.tenant_key
    cookie, binding = services.flows.new_binding()
    flow = Flow(
        tenant_key=tenant_key,
        # No client: the flow ends on this service's own page (signed_in below).
        client_id="",
        redirect_uri=page_url(services, tenant_key),
        state=None,
        code_challenge="",
        scope="",
        resource=None,
        binding=binding,
        account=True,
    )
    sealed = services.flows.seal(flow)
    try:
        connector = services.logins.for_company(tenant_key, signin.setup)
        destination = await connector.begin(browser.attempt(services, flow, sealed))
    except LoginFailed as failure:
        log.warning("login_unavailable", tenant=tenant_key, reason=str(failure))
        raise AuthorizePage(503, "Sign-in is not available right now", str(failure)) from None
    response = RedirectResponse(destination, status_code=303, headers=NO_STORE)
    browser.bind(services, response, tenant_key, cookie)
    return response


def signed_in(services: OAuthServices, flow: Flow, customer_id: int) -> Response:
    """The company vouched for the customer: their page's session starts."""
    sessions = session.sessions_for(tuple(services.settings.secret_keys))
    response = RedirectResponse(
        page_url(services, flow.tenant_key), status_code=303, headers=NO_STORE
    )
    session.start(
        response,
        flow.tenant_key,
        sessions.issue(flow.tenant_key, customer_id),
        secure=services.settings.base_scheme == "https",
    )
    browser.release(response, flow.tenant_key)
    log.info("account_signin_completed", tenant=flow.tenant_key)
    return response


def not_signed_in(error: str, description: str) -> AuthorizePage:
    """The login refused or could not be reached: no client waits for this sign-in, so the
    customer is told on a page."""
    if error == "temporarily_unavailable":
        return AuthorizePage(503, "Sign-in is not available right now", description)
    return AuthorizePage(400, "You are not signed in", description)
