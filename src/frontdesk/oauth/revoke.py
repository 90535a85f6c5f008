"""``POST /v1/{tenantKey}/oauth/revoke`` (RFC 7009, interface 4.6)."""

from __future__ import annotations

import structlog
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.limits.ratelimit import parse_rate_limit
from frontdesk.oauth.client_auth import authenticated_client
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.forms import RevocationRequest, client_id_of, parse, read_form
from frontdesk.oauth.rendering import NO_STORE
from frontdesk.observability import metrics

log = structlog.get_logger(__name__)


class Revoke:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services
        self._limit = parse_rate_limit(services.settings.oauth_rate_limit)
        self._client_limit = parse_rate_limit(services.settings.oauth_client_rate_limit)

    async def revoke(self, request: Request) -> Response:
        services = self._services
        # Counted before anything is looked up: an address pays before the database or a
        # client's metadata document host does (per address across every company, so that
        # made-up tenant keys buy no fresh allowance), and so does a client id named from
        # many addresses (guessing its secret), as at the token endpoint.
        tenant_key = request.path_params["tenant"]
        await services.limit(request, self._limit, "revoke", services.address(request))
        signin = await services.signin_company(request)
        form = await read_form(request)
        named = client_id_of(request, form)
        await services.limit(request, self._client_limit, "revoke-client", tenant_key, named)
        client_id = await authenticated_client(services, request, signin, named)
        revocation = parse(RevocationRequest, form)
        await services.grants.revoke(signin.tenant_key, client_id, revocation.token)
        log.info("token_revoked", tenant=signin.tenant_key, client_id=client_id)
        metrics.token_revoked(signin.tenant_key)
        # RFC 7009 2.2: 200 whether or not the token was known.
        return Response(status_code=200, headers=NO_STORE)
