"""How a sign-in to the customer's account page ends (frontdesk.account): with the page's
session instead of a code for a client. oauth.completion hands a flow marked ``account``
here; the account page itself lives above OAuth and starts such sign-ins
(account.signin)."""

from __future__ import annotations

import structlog
from starlette.responses import RedirectResponse, Response

from frontdesk.oauth import account_session as session
from frontdesk.oauth import browser
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.rendering import NO_STORE

log = structlog.get_logger(__name__)


def page_url(services: OAuthServices, tenant_key: str) -> str:
    return f"{services.settings.base_url}{session.cookie_path(tenant_key)}"


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
