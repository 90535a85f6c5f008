"""How a sign-in ends: the client's redirect URI with a code, or with an error
(RFC 6749 4.1.2), each carrying ``state`` and ``iss`` (RFC 9207)."""

from __future__ import annotations

import structlog
from starlette.responses import RedirectResponse, Response

from frontdesk.login.connector import Identity
from frontdesk.oauth import browser
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.redirects import redirect_with
from frontdesk.oauth.rendering import NO_STORE

log = structlog.get_logger(__name__)


def back_to_client(
    services: OAuthServices, flow: Flow, *, error: str, description: str
) -> Response:
    location = redirect_with(
        flow.redirect_uri,
        {
            "error": error,
            "error_description": description,
            "state": flow.state,
            "iss": services.settings.issuer(flow.tenant_key),
        },
    )
    return RedirectResponse(location, status_code=303, headers=NO_STORE)


async def signed_in(services: OAuthServices, flow: Flow, identity: Identity) -> Response:
    """The company vouched for the customer: record them, and send the client its code."""
    customer_id = await services.customers.record(
        flow.tenant_key, identity.subject, identity.email, identity.name
    )
    code = await services.grants.issue_code(flow, customer_id)
    log.info("signin_completed", tenant=flow.tenant_key, client_id=flow.client_id)
    location = redirect_with(
        flow.redirect_uri,
        {"code": code, "state": flow.state, "iss": services.settings.issuer(flow.tenant_key)},
    )
    response = RedirectResponse(location, status_code=303, headers=NO_STORE)
    browser.release(response, flow.tenant_key)
    return response
