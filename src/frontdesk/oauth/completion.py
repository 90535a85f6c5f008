"""How a sign-in ends: the client's redirect URI with a code, or with an error
(RFC 6749 4.1.2), each carrying ``state`` and ``iss`` (RFC 9207). A sign-in to the
customer's own account page ends there instead (oauth.account_completion)."""

from __future__ import annotations

import structlog
from starlette.responses import RedirectResponse, Response

from frontdesk.login.connector import Identity
from frontdesk.oauth import account_completion, browser, remembered
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.redirects import redirect_with
from frontdesk.oauth.rendering import NO_STORE
from frontdesk.observability import metrics

log = structlog.get_logger(__name__)


def back_to_client(
    services: OAuthServices, flow: Flow, *, error: str, description: str
) -> Response:
    if flow.account:
        raise account_completion.not_signed_in(error, description)
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
        flow.tenant_key,
        identity.subject,
        identity.email,
        identity.name,
        email_verified=identity.email_verified,
    )
    if flow.account:
        return account_completion.signed_in(services, flow, customer_id)
    if flow.consented_by is not None and flow.consented_by != customer_id:
        # The consent page was skipped for the customer this browser remembered, and
        # someone else signed in (a shared browser): they never allowed this client. No
        # code; the browser forgets the remembered customer, so the next try asks.
        log.info("signin_consent_not_given", tenant=flow.tenant_key, client_id=flow.client_id)
        metrics.signin_failed(flow.tenant_key, "denied")
        response = back_to_client(
            services,
            flow,
            error="access_denied",
            description="the customer who signed in has not allowed this client: start again",
        )
        browser.release(response, flow.tenant_key)
        remembered.forget_browser(services, response, flow.tenant_key)
        return response
    # The customer allowed the company's personal tools as they are now: the grant holds
    # their versions, and a tool changed since asks again (oauth.tool_consent).
    company = await services.registry.active(flow.tenant_key)
    snapshot = None if company is None else await services.tool_consent.record_consent(company)
    code = await services.grants.issue_code(flow, customer_id, snapshot)
    # The customer allowed these scopes (on the consent page, or at an earlier sign-in):
    # the next sign-in of this client asking for no more skips the page (oauth.remembered).
    await services.consents.remember(
        flow.tenant_key, customer_id, flow.client_id, flow.scope, snapshot
    )
    log.info("signin_completed", tenant=flow.tenant_key, client_id=flow.client_id)
    metrics.signin_completed(flow.tenant_key)
    location = redirect_with(
        flow.redirect_uri,
        {"code": code, "state": flow.state, "iss": services.settings.issuer(flow.tenant_key)},
    )
    response = RedirectResponse(location, status_code=303, headers=NO_STORE)
    browser.release(response, flow.tenant_key)
    remembered.remember_browser(services, response, flow.tenant_key, customer_id)
    return response
