"""The customer's browser during a sign-in: the cookie that binds a sealed flow to it
(oauth.flow), set on the consent page, checked at every later step, and spent at the end."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from frontdesk.login.connector import LoginAttempt
from frontdesk.oauth.context import OAuthServices, SigninCompany
from frontdesk.oauth.flow import COOKIE_NAME, FLOW_TTL_SECONDS, Flow


def cookie_path(tenant_key: str) -> str:
    return f"/v1/{tenant_key}/oauth"


def bind(services: OAuthServices, response: Response, tenant_key: str, nonce: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        nonce,
        max_age=FLOW_TTL_SECONDS,
        path=cookie_path(tenant_key),
        secure=services.settings.base_scheme == "https",
        httponly=True,
        # Lax: the cookie must come back on the top-level redirect from the company's
        # login, and on the consent form's POST from our own page.
        samesite="lax",
    )


def release(response: Response, tenant_key: str) -> None:
    """The sign-in is over: the browser binding is spent with it."""
    response.delete_cookie(COOKIE_NAME, path=cookie_path(tenant_key))


def open_flow(
    services: OAuthServices, request: Request, signin: SigninCompany, sealed: str | None
) -> Flow:
    """The sign-in this browser is in, or the "expired" page (oauth.flow)."""
    return services.flows.open(sealed, request.cookies.get(COOKIE_NAME), signin.tenant_key)


def attempt(services: OAuthServices, flow: Flow, sealed: str) -> LoginAttempt:
    callback_url = f"{services.settings.issuer(flow.tenant_key)}/callback"
    return services.flows.attempt(flow, sealed, callback_url)
