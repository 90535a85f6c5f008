"""``GET /v1/{tenantKey}/oauth/authorize`` (interface 4.3): check the request, then show the
customer the consent page.

Until the client and its redirect URI are verified, nothing may be sent to the redirect
URI: those errors are pages (400). Every later error goes back to the client (303) with
``error``, ``state`` and ``iss``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response

from frontdesk import scopes
from frontdesk.companies.tool_scopes import company_scopes
from frontdesk.limits.ratelimit import parse_rate_limit
from frontdesk.oauth import browser, remembered
from frontdesk.oauth.client_documents import ClientDocumentRefused, ClientDocumentUnavailable
from frontdesk.oauth.clients import KnownClient
from frontdesk.oauth.consent import to_login
from frontdesk.oauth.consent_page import consent_page
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.errors import AuthorizePage, AuthorizeRedirect, InvalidTarget
from frontdesk.oauth.flow import Flow
from frontdesk.oauth.grants import check_resource
from frontdesk.oauth.pkce import CHALLENGE
from frontdesk.oauth.redirects import is_registered
from frontdesk.observability import metrics
from frontdesk.sealing.signing import MAX_SIGNED_LENGTH

MAX_STATE_LENGTH = 2048
# What authorize reads (interface 4.3, RFC 8707): one of these given twice is refused, any
# other parameter is ignored, repeated or not (RFC 6749 3.1).
READ_PARAMETERS = frozenset(
    {
        *("response_type", "client_id", "redirect_uri", "state", "scope", "resource"),
        *("code_challenge", "code_challenge_method"),
    }
)


def _unknown_client() -> AuthorizePage:
    return AuthorizePage(
        400,
        "Unknown application",
        "The application asking to sign you in is not registered here. Go back to your"
        " assistant and connect it again.",
    )


def _refused_client(refused: ClientDocumentRefused) -> AuthorizePage:
    return AuthorizePage(400, "This application cannot sign you in", refused.description)


def _unavailable_client(unavailable: ClientDocumentUnavailable) -> AuthorizePage:
    # The application's own site did not answer: nothing is wrong with it as far as is known.
    return AuthorizePage(503, "Please try again in a moment", unavailable.description)


def _unregistered_redirect() -> AuthorizePage:
    return AuthorizePage(
        400,
        "Sign-in cannot continue",
        "The application gave an address to return to that it never registered, so this"
        " sign-in was stopped to keep your account safe.",
    )


def _single(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = params.get(name) or []
    return values[0] if len(values) == 1 else None


async def check_authorize_request(
    services: OAuthServices,
    signin: SigninCompany,
    params: Mapping[str, Sequence[str]],
    binding: str,
) -> tuple[KnownClient, Flow]:
    """The verified client and the sign-in to run, bound to the browser by ``binding``, or
    an error page or redirect."""
    settings = services.settings
    tenant_key = signin.tenant_key
    client_id = _single(params, "client_id")
    try:
        client = (
            await services.clients.find(tenant_key, client_id, signin.setup) if client_id else None
        )
    except ClientDocumentRefused as refused:
        raise _refused_client(refused) from None
    except ClientDocumentUnavailable as unavailable:
        metrics.outage_answered("client_document")
        raise _unavailable_client(unavailable) from None
    if client is None:
        raise _unknown_client()
    redirect_uri = _single(params, "redirect_uri")
    if redirect_uri is None or not is_registered(redirect_uri, client.redirect_uris):
        raise _unregistered_redirect()

    state = _single(params, "state")
    issuer = settings.issuer(tenant_key)

    def refuse(error: str, description: str) -> AuthorizeRedirect:
        return AuthorizeRedirect(
            error, description, redirect_uri=redirect_uri, state=state, issuer=issuer
        )

    repeated = sorted(
        name for name, values in params.items() if len(values) > 1 and name in READ_PARAMETERS
    )
    if repeated:
        raise refuse("invalid_request", f"parameters given more than once: {', '.join(repeated)}")
    if state is not None and len(state) > MAX_STATE_LENGTH:
        raise refuse("invalid_request", "state is too long")
    if _single(params, "response_type") != "code":
        raise refuse("unsupported_response_type", "response_type must be code")
    method = _single(params, "code_challenge_method")
    if method != "S256":
        raise refuse("invalid_request", "code_challenge_method must be S256 (PKCE is required)")
    challenge = _single(params, "code_challenge")
    if challenge is None or not CHALLENGE.match(challenge):
        raise refuse("invalid_request", "code_challenge must be a base64url SHA-256 (43 chars)")
    resource = _single(params, "resource")
    try:
        check_resource(resource, settings.mcp_url(tenant_key))
    except InvalidTarget as refused:
        raise refuse(refused.error, refused.description) from None

    flow = Flow(
        tenant_key=tenant_key,
        client_id=client.client_id,
        redirect_uri=redirect_uri,
        state=state,
        code_challenge=challenge,
        # Scopes we do not offer are dropped, not refused (frontdesk.scopes); the company
        # offers its tools' own too (companies.tool_scopes).
        scope=scopes.resolve(_single(params, "scope"), company_scopes(signin.company).offered),
        resource=settings.mcp_url(tenant_key) if resource is not None else None,
        binding=binding,
    )
    return client, flow


class Authorize:
    def __init__(self, services: OAuthServices) -> None:
        self._services = services
        self._limit = parse_rate_limit(services.settings.oauth_rate_limit)

    async def authorize(self, request: Request) -> Response:
        services = self._services
        # Counted before the company is looked up or a client's metadata document fetched:
        # an address naming a new document URL on every request would otherwise drive one
        # outbound fetch each. Per address across every company, not per company: a made-up
        # tenant key on every request would otherwise buy a fresh allowance, and a database
        # read, each time.
        await services.limit(
            request, self._limit, "authorize", services.address(request), page=True
        )
        signin = await services.signin_company(request, page=True)
        company = signin.company
        params = {key: request.query_params.getlist(key) for key in request.query_params}
        await services.limit_document_fetch(request, _single(params, "client_id"), page=True)
        cookie, binding = services.flows.new_binding()
        client, flow = await check_authorize_request(services, signin, params, binding)
        sealed = services.flows.seal(flow)
        if len(sealed) > MAX_SIGNED_LENGTH:
            # It would fail verification at consent and read as "expired": refuse it now.
            raise AuthorizeRedirect(
                "invalid_request",
                "state and redirect_uri are too long to carry through the sign-in",
                redirect_uri=flow.redirect_uri,
                state=flow.state,
                issuer=services.settings.issuer(company.tenant_key),
            )
        metrics.signin_started(company.tenant_key)
        consented_by = await remembered.allowed_by(
            services, request, company.tenant_key, flow.client_id, flow.scope
        )
        if consented_by is not None:
            # Allowed at an earlier sign-in, for these scopes or more, and not revoked since:
            # not asked again (store.consents); the company's login still runs, and must
            # sign that same customer in (oauth.completion).
            flow = replace(flow, consented_by=consented_by)
            response = await to_login(services, signin, flow, services.flows.seal(flow))
            browser.bind(services, response, company.tenant_key, cookie)
            return response
        changed = await remembered.tools_changed(
            services, request, company.tenant_key, flow.client_id
        )
        response = consent_page(request, services, company, client, flow, sealed, changed)
        browser.bind(services, response, company.tenant_key, cookie)
        return response
