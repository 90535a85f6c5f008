"""``POST /v1/{tenantKey}/oauth/token`` (interface 4.5): the ``authorization_code`` and
``refresh_token`` grants, and for a company that trusts an enterprise identity provider the
``jwt-bearer`` grant of an ID-JAG (oauth.assertion_grant)."""

from __future__ import annotations

import structlog
from starlette.requests import Request
from starlette.responses import Response

from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.limits.ratelimit import parse_rate_limit
from frontdesk.oauth.client_auth import authenticated_client
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.forms import (
    AuthorizationCodeRequest,
    client_id_of,
    read_form,
    token_request,
)
from frontdesk.oauth.grants import check_resource
from frontdesk.oauth.rendering import JSON, NO_STORE
from frontdesk.observability import metrics

log = structlog.get_logger(__name__)
# RFC 7523 2.1; elsewhere an unsupported grant type, as before (interface 2.5).
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class Token:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services
        self._limit = parse_rate_limit(services.settings.oauth_rate_limit)
        self._client_limit = parse_rate_limit(services.settings.oauth_client_rate_limit)

    async def token(self, request: Request) -> Response:
        services = self._services
        # Counted before anything is looked up: an address guessing codes or tokens pays
        # before the database does, and so does a client id named from many addresses.
        tenant_key = request.path_params["tenant"]
        await services.limit(request, self._limit, "token", tenant_key, services.address(request))
        signin = await services.signin_company(request)
        form = await read_form(request)
        named = client_id_of(request, form)
        await services.limit(request, self._client_limit, "token-client", tenant_key, named)
        client_id = await authenticated_client(services, request, signin, named)
        tenant = signin.tenant_key
        if form.get("grant_type") == JWT_BEARER and signin.setup.enterprise_providers:
            return await self._assertion(signin, client_id, form)
        grant = token_request(form)
        check_resource(grant.resource, services.settings.mcp_url(tenant))
        if isinstance(grant, AuthorizationCodeRequest):
            body = await services.grants.redeem_code(tenant, client_id, signin.setup, grant)
        else:
            offers = company_scopes(signin.company).offered
            body = await services.grants.refresh(tenant, client_id, signin.setup, grant, offers)
        log.info("tokens_issued", tenant=tenant, client_id=client_id, grant=grant.grant_type)
        metrics.tokens_issued(tenant, grant.grant_type)
        return JSON(body, headers=NO_STORE)

    async def _assertion(
        self, signin: SigninCompany, client_id: str, form: dict[str, str]
    ) -> Response:
        # Imported here: the JOSE stack is only loaded by instances that verify an ID-JAG.
        from frontdesk.oauth.assertion_grant import redeem

        body = await redeem(self._services, signin, client_id, form)
        # Neither the assertion nor any claim of it is logged (extension 7.4.2).
        log.info("tokens_issued", tenant=signin.tenant_key, client_id=client_id, grant=JWT_BEARER)
        metrics.tokens_issued(signin.tenant_key, "jwt-bearer")
        return JSON(body, headers=NO_STORE)
