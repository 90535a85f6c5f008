"""The customer a browser last signed in as at one company, so that a sign-in of a client
they already allowed (store.consents) goes straight to the company's login.

The consent page comes before the login (oauth.authorize), when who the customer is cannot
be known yet: so the end of each sign-in leaves a signed cookie naming the customer, on
the company's OAuth path only, and authorize skips the page when that customer allowed
this client at least the scopes asked for. The cookie holds a customer's row id, signed
for this purpose (frontdesk.sealing.signing): it proves nothing but that this browser signed in
as them, and it skips nothing but the question; the company's login still decides who
signs in. Revoking the client forgets the consent (store.token_revocation), and the page
is shown again.
"""

from __future__ import annotations

from functools import cache

from starlette.requests import Request
from starlette.responses import Response

from frontdesk.oauth.browser import cookie_path
from frontdesk.oauth.context import OAuthServices
from frontdesk.oauth.tool_consent import ChangedTool
from frontdesk.sealing.signing import Signer

REMEMBERED_COOKIE = "frontdesk_customer"
# As long as the longest refresh token (the contract's 30 days): past it a client signs
# the customer in again anyway.
REMEMBER_SECONDS = 30 * 24 * 60 * 60


@cache
def _signer(secret_keys: tuple[str, ...]) -> Signer:
    return Signer(secret_keys, "remembered-customer/v1")


def _signer_of(services: OAuthServices) -> Signer:
    return _signer(tuple(services.settings.secret_keys))


def remember_browser(
    services: OAuthServices, response: Response, tenant_key: str, customer_id: int
) -> None:
    value = _signer_of(services).sign({"t": tenant_key, "c": customer_id}, REMEMBER_SECONDS)
    response.set_cookie(
        REMEMBERED_COOKIE,
        value,
        max_age=REMEMBER_SECONDS,
        path=cookie_path(tenant_key),
        secure=services.settings.base_scheme == "https",
        httponly=True,
        # Lax: sent on the top-level GET from the client to authorize, never on a
        # cross-site subrequest.
        samesite="lax",
    )


def remembered_customer(services: OAuthServices, request: Request, tenant_key: str) -> int | None:
    """The customer this browser last signed in as at this company, if it says so truly."""
    value = request.cookies.get(REMEMBERED_COOKIE)
    payload = _signer_of(services).verify(value) if value else None
    if payload is None or payload.get("t") != tenant_key:
        return None
    customer_id = payload.get("c")
    return customer_id if type(customer_id) is int else None


async def allowed_by(
    services: OAuthServices, request: Request, tenant_key: str, client_id: str, scope: str
) -> int | None:
    """The customer this browser remembers, when they allowed ``client_id`` at least
    ``scope``; None when the consent page must ask.

    The browser may be shared: whoever signs in next is checked against this customer
    (oauth.completion), and a code is issued only to them."""
    customer_id = remembered_customer(services, request, tenant_key)
    if customer_id is None:
        return None
    if not await services.consents.has_consented(tenant_key, customer_id, client_id, scope):
        return None
    # A tool changed since, in a way that may do more, asks again (oauth.tool_consent).
    if await tools_changed(services, request, tenant_key, client_id):
        return None
    return customer_id


async def tools_changed(
    services: OAuthServices, request: Request, tenant_key: str, client_id: str
) -> tuple[ChangedTool, ...]:
    """The personal tools that changed since this browser's customer last allowed the
    client, in a way that asks again; none when no customer is remembered."""
    customer_id = remembered_customer(services, request, tenant_key)
    company = await services.registry.active(tenant_key)
    if customer_id is None or company is None:
        return ()
    snapshot = await services.consents.tool_snapshot(tenant_key, customer_id, client_id)
    return await services.tool_consent.changed(company, snapshot)


def forget_browser(services: OAuthServices, response: Response, tenant_key: str) -> None:
    response.delete_cookie(REMEMBERED_COOKIE, path=cookie_path(tenant_key))
