"""HTTP for customer sign-in: discovery, register, authorize, consent, login, callback,
token and revoke (SPEC 4.1, 4.3-4.6). Handlers parse and check the request at the edge,
call the OAuth modules, and raise; ``rendering`` turns every error into its response."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson
import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from frontdesk.companies.catalog import ServedCompany
from frontdesk.companies.definition import SigninSetup
from frontdesk.companies.registry import CompanyRegistry
from frontdesk.config import Settings
from frontdesk.login.connector import LoginAttempt, LoginFailed, ProviderUnavailable
from frontdesk.login.connectors import LoginConnectors
from frontdesk.login.dev import DevLogin
from frontdesk.network import ClientAddressResolver
from frontdesk.oauth import metadata
from frontdesk.oauth.authorize import check_authorize_request, redirect_with
from frontdesk.oauth.errors import (
    AuthorizePage,
    AuthorizeRedirect,
    InvalidClient,
    InvalidClientMetadata,
    InvalidRequest,
    RateLimited,
    SigninNotSetUp,
    UnsupportedGrantType,
)
from frontdesk.oauth.flow import COOKIE_NAME, FLOW_TTL_SECONDS, Flow, FlowSigner
from frontdesk.oauth.grants import Grants
from frontdesk.oauth.pages import page
from frontdesk.oauth.registration import parse_registration, register
from frontdesk.oauth.rendering import JSON, NO_STORE
from frontdesk.ratelimit import RateLimit, RateLimiter, parse_rate_limit
from frontdesk.signing import MAX_SIGNED_LENGTH
from frontdesk.store.clients import ClientRepository
from frontdesk.store.customers import CustomerRepository

log = structlog.get_logger(__name__)

MAX_FORM_BYTES = 16 * 1024
MAX_REGISTRATION_BYTES = 64 * 1024
NOT_SET_UP = SigninNotSetUp("this company has not set up customer sign-in")


@dataclass(frozen=True, slots=True)
class SigninCompany:
    company: ServedCompany
    setup: SigninSetup


class OAuthEndpoints:
    def __init__(
        self,
        settings: Settings,
        registry: CompanyRegistry,
        clients: ClientRepository,
        customers: CustomerRepository,
        grants: Grants,
        logins: LoginConnectors,
        limiter: RateLimiter,
        addresses: ClientAddressResolver,
    ) -> None:
        self._settings = settings
        self._registry = registry
        self._clients = clients
        self._customers = customers
        self._grants = grants
        self._logins = logins
        self._limiter = limiter
        self._addresses = addresses
        self._flows = FlowSigner(settings.secret_keys)
        self._registration_limit: RateLimit = parse_rate_limit(settings.registration_rate_limit)

    def routes(self) -> list[BaseRoute]:
        issuer_paths = (
            "/.well-known/oauth-authorization-server/v1/{tenant}/oauth",
            "/.well-known/openid-configuration/v1/{tenant}/oauth",
            "/v1/{tenant}/oauth/.well-known/oauth-authorization-server",
            "/v1/{tenant}/oauth/.well-known/openid-configuration",
        )
        # The token endpoint first: every refresh is routed, and the router tries each
        # route's pattern in turn.
        return [
            Route("/v1/{tenant}/oauth/token", self.token, methods=["POST"]),
            *(Route(path, self.server_metadata, methods=["GET"]) for path in issuer_paths),
            Route(
                "/.well-known/oauth-protected-resource/v1/{tenant}/mcp",
                self.resource_metadata,
                methods=["GET"],
            ),
            Route("/v1/{tenant}/oauth/register", self.register, methods=["POST"]),
            Route("/v1/{tenant}/oauth/authorize", self.authorize, methods=["GET"]),
            Route("/v1/{tenant}/oauth/consent", self.consent, methods=["POST"]),
            Route("/v1/{tenant}/oauth/login", self.login_form, methods=["GET"]),
            Route("/v1/{tenant}/oauth/login", self.login_submit, methods=["POST"]),
            Route("/v1/{tenant}/oauth/callback", self.callback, methods=["GET"]),
            Route("/v1/{tenant}/oauth/revoke", self.revoke, methods=["POST"]),
        ]

    # Discovery ---------------------------------------------------------------------------

    async def server_metadata(self, request: Request) -> Response:
        tenant = (await self._signin_company(request)).company.tenant_key
        return JSON(metadata.authorization_server(self._settings, tenant))

    async def resource_metadata(self, request: Request) -> Response:
        tenant = (await self._signin_company(request)).company.tenant_key
        return JSON(metadata.protected_resource(self._settings, tenant))

    # Registration ------------------------------------------------------------------------

    async def register(self, request: Request) -> Response:
        signin = await self._signin_company(request)
        address = self._addresses.resolve(request.scope)
        verdict = await self._limiter.hit(self._registration_limit, "register", address)
        if not verdict.allowed:
            raise RateLimited(verdict.retry_after)
        if _media_type(request) != "application/json":
            raise InvalidClientMetadata("the registration must be sent as application/json")
        body = await _bounded_body(request, MAX_REGISTRATION_BYTES)
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise InvalidClientMetadata("the registration is not valid JSON") from None
        registration = parse_registration(document)
        response = await register(self._clients, signin.company.tenant_key, registration)
        log.info(
            "client_registered", tenant=signin.company.tenant_key, client_id=response["client_id"]
        )
        return JSON(response, status_code=201, headers=NO_STORE)

    # Authorize, consent, login, callback --------------------------------------------------

    async def authorize(self, request: Request) -> Response:
        signin = await self._signin_company(request, page=True)
        company = signin.company
        params = {key: request.query_params.getlist(key) for key in request.query_params}
        client, flow = await check_authorize_request(
            params, company.tenant_key, self._clients, self._settings
        )
        sealed = self._flows.seal(flow)
        if len(sealed) > MAX_SIGNED_LENGTH:
            # It would fail verification at consent and read as "expired": refuse it now.
            raise AuthorizeRedirect(
                "invalid_request",
                "state and redirect_uri are too long to carry through the sign-in",
                redirect_uri=flow.redirect_uri,
                state=flow.state,
                issuer=self._settings.issuer(company.tenant_key),
            )
        response = page(
            request,
            "consent.html",
            company_name=company.name,
            client_name=client.client_name or urlsplit(flow.redirect_uri).hostname,
            redirect_host=urlsplit(flow.redirect_uri).netloc,
            scopes=flow.scope.split(),
            flow=sealed,
            consent_url=f"{self._settings.issuer(company.tenant_key)}/consent",
        )
        self._bind_browser(response, company.tenant_key, flow.nonce)
        return response

    async def consent(self, request: Request) -> Response:
        signin = await self._signin_company(request, page=True)
        form = await _form(request)
        flow = self._open_flow(request, signin, form.get("flow"))
        sealed = form["flow"]
        if form.get("decision") != "allow":
            return self._back_to_client(
                flow, error="access_denied", description="the customer denied the request"
            )
        try:
            connector = self._logins.for_company(flow.tenant_key, signin.setup)
            destination = await connector.begin(self._attempt(flow, sealed))
        except LoginFailed as failure:
            log.warning("login_unavailable", tenant=flow.tenant_key, reason=str(failure))
            return self._back_to_client(
                flow, error="temporarily_unavailable", description=str(failure)
            )
        return RedirectResponse(destination, status_code=303, headers=NO_STORE)

    async def login_form(self, request: Request) -> Response:
        signin = await self._signin_company(request, page=True)
        sealed = request.query_params.get("flow")
        self._open_flow(request, signin, sealed)
        self._require_dev_login(signin)
        return self._login_page(request, signin, sealed or "")

    async def login_submit(self, request: Request) -> Response:
        signin = await self._signin_company(request, page=True)
        form = await _form(request)
        flow = self._open_flow(request, signin, form.get("flow"))
        connector = self._require_dev_login(signin)
        try:
            identity = await connector.complete(self._attempt(flow, form["flow"]), form)
        except LoginFailed as failure:
            return self._login_page(
                request,
                signin,
                form["flow"],
                problem=str(failure),
                email=form.get("email", ""),
                name=form.get("name", ""),
            )
        return await self._finish(flow, identity.subject, identity.email, identity.name)

    async def callback(self, request: Request) -> Response:
        signin = await self._signin_company(request, page=True)
        sealed = request.query_params.get("state")
        flow = self._open_flow(request, signin, sealed)
        query = dict(request.query_params)
        try:
            connector = self._logins.for_company(flow.tenant_key, signin.setup)
            identity = await connector.complete(self._attempt(flow, sealed or ""), query)
        except ProviderUnavailable as failure:
            # An outage is not a refusal: the client may start again later (RFC 6749 4.1.2.1).
            log.warning("login_unavailable", tenant=flow.tenant_key, reason=str(failure))
            return self._back_to_client(
                flow, error="temporarily_unavailable", description=str(failure)
            )
        except LoginFailed as failure:
            log.warning("login_failed", tenant=flow.tenant_key, reason=str(failure))
            return self._back_to_client(flow, error="access_denied", description=str(failure))
        return await self._finish(flow, identity.subject, identity.email, identity.name)

    async def _finish(
        self, flow: Flow, subject: str, email: str | None, name: str | None
    ) -> Response:
        customer_id = await self._customers.record(flow.tenant_key, subject, email, name)
        code = await self._grants.issue_code(flow, customer_id)
        log.info("signin_completed", tenant=flow.tenant_key, client_id=flow.client_id)
        location = redirect_with(
            flow.redirect_uri,
            {"code": code, "state": flow.state, "iss": self._settings.issuer(flow.tenant_key)},
        )
        response = RedirectResponse(location, status_code=303, headers=NO_STORE)
        # The sign-in is over: the browser binding is spent with it.
        response.delete_cookie(COOKIE_NAME, path=self._cookie_path(flow.tenant_key))
        return response

    # Token and revocation -----------------------------------------------------------------

    async def token(self, request: Request) -> Response:
        signin = await self._signin_company(request)
        form = await _form(request)
        client_id = await self._authenticate_client(request, signin, form)
        tenant = signin.company.tenant_key
        match form.get("grant_type"):
            case "authorization_code":
                body = await self._grants.redeem_code(tenant, client_id, signin.setup, form)
            case "refresh_token":
                body = await self._grants.refresh(tenant, client_id, signin.setup, form)
            case None:
                raise InvalidRequest("grant_type is required")
            case _:
                raise UnsupportedGrantType("grant_type must be authorization_code or refresh_token")
        log.info("tokens_issued", tenant=tenant, client_id=client_id, grant=form["grant_type"])
        return JSON(body, headers=NO_STORE)

    async def revoke(self, request: Request) -> Response:
        signin = await self._signin_company(request)
        form = await _form(request)
        client_id = await self._authenticate_client(request, signin, form)
        token = form.get("token")
        if not token:
            raise InvalidRequest("token is required")
        await self._grants.revoke(signin.company.tenant_key, client_id, token)
        log.info("token_revoked", tenant=signin.company.tenant_key, client_id=client_id)
        # RFC 7009 2.2: 200 whether or not the token was known.
        return Response(status_code=200, headers=NO_STORE)

    # Helpers -----------------------------------------------------------------------------

    async def _signin_company(self, request: Request, page: bool = False) -> SigninCompany:
        company = await self._registry.active(request.path_params["tenant"])
        if company is None or company.definition.signin is None:
            if page:
                raise AuthorizePage(
                    404,
                    "Sign-in is not available",
                    "This company has not set up customer sign-in.",
                )
            raise NOT_SET_UP
        request.state.company_name = company.name
        return SigninCompany(company, company.definition.signin)

    async def _authenticate_client(
        self, request: Request, signin: SigninCompany, form: Mapping[str, str]
    ) -> str:
        """The client id, from HTTP Basic (as the username) or the form (SPEC 4.5)."""
        from_header = _basic_username(request.headers.get("authorization"))
        from_form = form.get("client_id")
        if from_header is not None and from_form is not None and from_header != from_form:
            raise InvalidRequest("client_id differs between the Authorization header and the form")
        client_id = from_header or from_form
        if not client_id:
            raise InvalidClient("client_id is required (HTTP Basic username or form field)")
        if await self._clients.get(signin.company.tenant_key, client_id) is None:
            raise InvalidClient("unknown client")
        return client_id

    def _open_flow(self, request: Request, signin: SigninCompany, sealed: str | None) -> Flow:
        return self._flows.open(sealed, request.cookies.get(COOKIE_NAME), signin.company.tenant_key)

    def _attempt(self, flow: Flow, sealed: str) -> LoginAttempt:
        return self._flows.attempt(
            flow, sealed, f"{self._settings.issuer(flow.tenant_key)}/callback"
        )

    def _require_dev_login(self, signin: SigninCompany) -> DevLogin:
        try:
            connector = self._logins.for_company(signin.company.tenant_key, signin.setup)
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
            login_url=f"{self._settings.issuer(signin.company.tenant_key)}/login",
            problem=extra.get("problem"),
            email=extra.get("email", ""),
            name=extra.get("name", ""),
        )

    def _back_to_client(self, flow: Flow, *, error: str, description: str) -> Response:
        location = redirect_with(
            flow.redirect_uri,
            {
                "error": error,
                "error_description": description,
                "state": flow.state,
                "iss": self._settings.issuer(flow.tenant_key),
            },
        )
        return RedirectResponse(location, status_code=303, headers=NO_STORE)

    def _cookie_path(self, tenant_key: str) -> str:
        return f"/v1/{tenant_key}/oauth"

    def _bind_browser(self, response: Response, tenant_key: str, nonce: str) -> None:
        response.set_cookie(
            COOKIE_NAME,
            nonce,
            max_age=FLOW_TTL_SECONDS,
            path=self._cookie_path(tenant_key),
            secure=self._settings.base_scheme == "https",
            httponly=True,
            # Lax: the cookie must come back on the top-level redirect from the company's
            # login, and on the consent form's POST from our own page.
            samesite="lax",
        )


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def _bounded_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise InvalidRequest("the request body is too large")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise InvalidRequest("the request body is too large")
    return body


async def _form(request: Request) -> dict[str, str]:
    """A form-urlencoded body; a parameter given twice is refused (RFC 6749 3.1)."""
    if _media_type(request) != "application/x-www-form-urlencoded":
        raise InvalidRequest("the body must be application/x-www-form-urlencoded")
    body = await _bounded_body(request, MAX_FORM_BYTES)
    try:
        pairs = parse_qsl(
            body.decode("ascii"), keep_blank_values=True, encoding="utf-8", errors="strict"
        )
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("the body is not valid form-urlencoded UTF-8") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise InvalidRequest(f"{name} is given more than once")
        form[name] = value
    return form


def _basic_username(header: str | None) -> str | None:
    """The client id from ``Authorization: Basic``; public clients have no password."""
    if header is None:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise InvalidClient("the Authorization header is malformed") from None
    username, _, _password = decoded.partition(":")
    # RFC 6749 2.3.1: the client id is form-urlencoded before it is put in the header.
    return unquote(username.replace("+", " ")) or None
