"""``GET /v1/{tenantKey}/oauth/callback``: the company's identity provider sends the
customer back here; the flow is spent, and the login connector verifies who they are."""

from __future__ import annotations

import structlog
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.limits.ratelimit import parse_rate_limit
from frontdesk.login.connector import LoginFailed, ProviderUnavailable
from frontdesk.oauth import browser
from frontdesk.oauth.completion import back_to_client, signed_in
from frontdesk.oauth.context import OAuthServices
from frontdesk.observability import metrics

log = structlog.get_logger(__name__)


class Callback:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services
        self._limit = parse_rate_limit(services.settings.oauth_rate_limit)

    async def callback(self, request: Request) -> Response:
        services = self._services
        # Before the company is looked up or the identity provider called: each callback
        # costs a round trip to the provider, which no address may drive at will.
        await services.limit(
            request,
            self._limit,
            "callback",
            request.path_params["tenant"],
            services.address(request),
        )
        signin = await services.signin_company(request, page=True)
        sealed = request.query_params.get("state")
        flow = browser.open_flow(services, request, signin, sealed)
        # Spent before the provider is called, whatever comes of it: a callback replayed,
        # after a failure as after a success, never reaches the provider again (RFC 9700
        # 2.1, 4.7.1: a one-time-use state). Spent only once the flow has opened, with this
        # browser's cookie: whoever merely read the state cannot spend the customer's flow.
        await services.flows.spend(flow)
        query = dict(request.query_params)
        try:
            connector = services.logins.for_company(flow.tenant_key, signin.setup)
            identity = await connector.complete(
                browser.attempt(services, flow, sealed or ""), query
            )
        except ProviderUnavailable as failure:
            # An outage is not a refusal: the client may start again later (RFC 6749 4.1.2.1).
            log.warning("login_unavailable", tenant=flow.tenant_key, reason=str(failure))
            metrics.signin_failed(flow.tenant_key, "provider_unavailable")
            return back_to_client(
                services, flow, error="temporarily_unavailable", description=str(failure)
            )
        except LoginFailed as failure:
            log.warning("login_failed", tenant=flow.tenant_key, reason=str(failure))
            metrics.signin_failed(flow.tenant_key, "login_failed")
            return back_to_client(services, flow, error="access_denied", description=str(failure))
        return await signed_in(services, flow, identity)
