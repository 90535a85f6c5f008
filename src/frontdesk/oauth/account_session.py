"""The account page's session: a signed, short-lived cookie, and the CSRF token tied to it.

The cookie holds only what the page needs: the company, the customer's id and the expiry,
signed under a purpose of its own (frontdesk.sealing.signing), so no other signed value (a sign-in
in progress, an MCP session) is ever taken for it. Nothing is stored server-side; a
session ends when its cookie expires or the customer signs out.

The CSRF token is tied to the cookie's value (frontdesk.sealing.session_csrf).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from starlette.responses import Response

from frontdesk.sealing.session_csrf import SessionCsrf
from frontdesk.sealing.signing import Signer

COOKIE_NAME = "frontdesk_account"
SESSION_TTL_SECONDS = 30 * 60


def cookie_path(tenant_key: str) -> str:
    return f"/v1/{tenant_key}/account"


@dataclass(frozen=True, slots=True)
class AccountSession:
    tenant_key: str
    customer_id: int
    # The cookie's own value: what the CSRF token is derived from.
    value: str


class AccountSessions:
    def __init__(self, secret_keys: Sequence[str]) -> None:
        self._signer = Signer(secret_keys, "account-session/v1")
        self._csrf = SessionCsrf(secret_keys, b"frontdesk/account-csrf/v1")

    def issue(self, tenant_key: str, customer_id: int) -> str:
        return self._signer.sign({"t": tenant_key, "c": customer_id}, SESSION_TTL_SECONDS)

    def open(self, value: str | None, tenant_key: str) -> AccountSession | None:
        """The session, when the cookie is ours, unexpired, and of this company."""
        payload = self._signer.verify(value) if value else None
        if payload is None or payload.get("t") != tenant_key:
            return None
        customer_id = payload.get("c")
        if not isinstance(customer_id, int) or isinstance(customer_id, bool):
            return None
        assert value is not None
        return AccountSession(tenant_key, customer_id, value)

    def csrf_token(self, session: AccountSession) -> str:
        return self._csrf.token(session.value)

    def csrf_matches(self, session: AccountSession, token: str | None) -> bool:
        return self._csrf.matches(session.value, token)


@cache
def sessions_for(secret_keys: tuple[str, ...]) -> AccountSessions:
    """One per set of keys: the sign-in's end (oauth.completion) and the page share it."""
    return AccountSessions(secret_keys)


def start(response: Response, tenant_key: str, value: str, *, secure: bool) -> None:
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=SESSION_TTL_SECONDS,
        path=cookie_path(tenant_key),
        secure=secure,
        httponly=True,
        # Lax: sent when the customer comes back from the company's login (a top-level
        # redirect), never with another site's POST.
        samesite="lax",
    )


def end(response: Response, tenant_key: str) -> None:
    response.delete_cookie(COOKIE_NAME, path=cookie_path(tenant_key), httponly=True)
