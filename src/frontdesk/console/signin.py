"""Signing in to the console: a company's staff through the login its ``console`` section
names (companies.console_setup), operators through the deployment's OpenID provider
(FRONTDESK_CONSOLE_OPERATOR_*). Both reuse the company-login connectors (login/): ``dev``
(refused in production, as the customers' dev login is) and ``oidc`` (PKCE and a nonce
derived from the sign-in's server-side secret, the id token checked in full).

The sign-in in progress is a signed state (its own purpose), which names who is signing in
(a company or the operators) and is bound to the browser that began it by a nonce cookie,
as a customer's sign-in is (oauth.browser): a state carried to another browser is refused.
A staff member is admitted by an address their login vouches for: an ``oidc`` login's
``email_verified`` must be true (OpenID Connect Core 1.0, 5.1), so an address anyone could
set on their own account at the provider never opens a company's console.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

import structlog
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from frontdesk.companies.console_setup import ConsoleDevLogin, ConsoleSetup
from frontdesk.console import session
from frontdesk.console.context import ConsoleServices
from frontdesk.console.session import ConsoleSession
from frontdesk.login.connector import Identity, LoginAttempt, LoginConnector, LoginFailed
from frontdesk.login.dev import DevLogin
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.oauth.rendering import NO_STORE
from frontdesk.sealing.company_secrets import secret_from_environment
from frontdesk.sealing.signing import Signer, b64encode

log = structlog.get_logger(__name__)

BINDING_COOKIE = "frontdesk_console_signin"
SIGNIN_TTL_SECONDS = 10 * 60
# Who signs in when the state names no company.
OPERATORS = ""


def _not_found() -> AuthorizePage:
    return AuthorizePage(404, "Not found", "There is no console here.")


class ConsoleSignin:
    def __init__(self, services: ConsoleServices) -> None:
        self._services = services
        keys = services.settings.secret_keys
        self._states = Signer(keys, "console-signin/v1")
        self._secret_key = hmac.new(
            keys[0].encode(), b"frontdesk/console-signin-secret/v1", hashlib.sha256
        ).digest()
        self.sessions = session.ConsoleSessions(keys)

    @property
    def operators_can_sign_in(self) -> bool:
        settings = self._services.settings
        return settings.console_operator_issuer is not None

    async def begin(self, tenant_key: str) -> Response:
        """Send the browser to the login of ``tenant_key``'s staff (OPERATORS: the
        operators'), bound to this browser."""
        connector = await self._connector(tenant_key)
        nonce = secrets.token_urlsafe(32)
        state = self._states.sign({"t": tenant_key, "b": _digest(nonce)}, SIGNIN_TTL_SECONDS)
        try:
            destination = await connector.begin(self._attempt(state))
        except LoginFailed as failure:
            log.warning("console_login_unavailable", tenant=tenant_key, reason=str(failure))
            raise AuthorizePage(503, "Sign-in is not available right now", str(failure)) from None
        response = RedirectResponse(destination, status_code=303, headers=NO_STORE)
        response.set_cookie(
            BINDING_COOKIE,
            nonce,
            max_age=SIGNIN_TTL_SECONDS,
            path=session.COOKIE_PATH,
            secure=self._services.secure,
            httponly=True,
            samesite="lax",
        )
        return response

    def opened_state(self, request: Request, state: str | None) -> str:
        """Who the browser's sign-in in progress is for; 400 for a state that is not
        ours, expired, or begun in another browser."""
        payload = self._states.verify(state) if state else None
        nonce = request.cookies.get(BINDING_COOKIE)
        if (
            payload is None
            or not isinstance(payload.get("t"), str)
            or nonce is None
            or not hmac.compare_digest(str(payload.get("b")), _digest(nonce))
        ):
            raise AuthorizePage(
                400,
                "This sign-in has expired",
                "Open the console again and sign in from there.",
            )
        tenant_key: str = payload["t"]
        return tenant_key

    async def complete(
        self, request: Request, state: str | None, params: Mapping[str, str]
    ) -> Response:
        """End the sign-in: the identity the login vouches for, admitted when it is staff
        (or an operator), becomes the console's session."""
        tenant_key = self.opened_state(request, state)
        assert state is not None
        connector = await self._connector(tenant_key)
        try:
            identity = await connector.complete(self._attempt(state), params)
        except LoginFailed as failure:
            raise AuthorizePage(403, "You could not be signed in", str(failure)) from None
        await self._admit(tenant_key, identity, dev=isinstance(connector, DevLogin))
        assert identity.email is not None
        owner = None if tenant_key == OPERATORS else tenant_key
        destination = (
            f"{self._services.base}/"
            if owner is None
            else company_url(self._services, owner, "tools")
        )
        response = RedirectResponse(destination, status_code=303, headers=NO_STORE)
        value = self.sessions.issue(identity.email.lower(), owner)
        session.start(response, value, secure=self._services.secure)
        response.delete_cookie(BINDING_COOKIE, path=session.COOKIE_PATH, httponly=True)
        log.info("console_signed_in", tenant=owner, operator=owner is None)
        return response

    async def still_admitted(self, current: ConsoleSession) -> bool:
        """Whether the session's holder is still staff of its company (still an operator):
        taken off the list, or the company's console gone or the company inactive, a
        session ends at its next request, not when its cookie expires."""
        owner = OPERATORS if current.tenant_key is None else current.tenant_key
        try:
            return await self._is_staff(owner, current.email)
        except AuthorizePage:
            return False

    async def _is_staff(self, tenant_key: str, email: str) -> bool:
        if tenant_key == OPERATORS:
            allowed = self._services.settings.console_operator_emails
            return email.lower() in {address.lower() for address in allowed}
        return (await self._setup(tenant_key)).staff.admits(email)

    async def _admit(self, tenant_key: str, identity: Identity, *, dev: bool) -> None:
        email = identity.email
        vouched = email is not None and (dev or identity.email_verified)
        admitted = vouched and email is not None and await self._is_staff(tenant_key, email)
        if not admitted:
            log.warning("console_signin_refused", tenant=tenant_key or None)
            raise AuthorizePage(
                403,
                "This account is not staff here",
                "Sign in with the account your company lists as its console staff.",
            )

    async def _setup(self, tenant_key: str) -> ConsoleSetup:
        company = await self._services.registry.active(tenant_key)
        if company is None or company.definition.console is None:
            raise _not_found()
        return company.definition.console

    async def _connector(self, tenant_key: str) -> LoginConnector:
        services = self._services
        settings = services.settings
        try:
            if tenant_key == OPERATORS:
                if settings.console_operator_issuer is None:
                    raise _not_found()
                return services.logins.console_oidc(
                    OPERATORS,
                    settings.console_operator_issuer,
                    settings.console_operator_client_id or "",
                    settings.console_operator_client_secret,
                    ["openid", "email"],
                )
            login = (await self._setup(tenant_key)).login
            if isinstance(login, ConsoleDevLogin):
                if settings.is_production:
                    raise LoginFailed("Sign-in is not available for this company right now.")
                return DevLogin(f"{services.base}/login")
            secret = secret_from_environment(
                tenant_key, "console.login.client_secret_env", login.client_secret_env
            )
            return services.logins.console_oidc(
                tenant_key, login.issuer, login.client_id, secret, login.scopes
            )
        except LoginFailed as failure:
            raise AuthorizePage(503, "Sign-in is not available right now", str(failure)) from None

    def _attempt(self, state: str) -> LoginAttempt:
        # The PKCE verifier and the nonce are derived from a secret that never leaves this
        # service, made from the signed state (login.oidc).
        secret = hmac.new(self._secret_key, state.encode(), hashlib.sha256).digest()
        return LoginAttempt(state, secret, f"{self._services.base}/callback")


def _digest(nonce: str) -> str:
    return b64encode(hashlib.sha256(nonce.encode()).digest())


def company_url(services: ConsoleServices, tenant_key: str, page: str) -> str:
    return f"{services.base}/{tenant_key}/{page}"
