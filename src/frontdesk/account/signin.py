"""Signing in to the account page: the same sign-in a client's authorization runs (the
company's login connector, the flow sealed and bound to the browser, spent by its callback,
oauth.flow), marked as the account's, so that it ends with the page's session instead of
a code for a client (oauth.account_completion ends it)."""

from __future__ import annotations

import structlog
from starlette.responses import RedirectResponse, Response

from frontdesk.login.connector import LoginFailed
from frontdesk.oauth import browser
from frontdesk.oauth.account_completion import page_url
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.rendering import NO_STORE

log = structlog.get_logger(__name__)


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
