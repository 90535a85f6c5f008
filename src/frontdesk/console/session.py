"""The console's session: a signed, expiring cookie scoped to ``/console/``, and the CSRF
token tied to it (the account page's pattern, oauth.account_session, under purposes of
its own so that neither cookie is ever taken for the other).

The cookie holds who signed in (a verified address), and either the one company whose
staff they are or that they are an operator, who may open any company. Nothing is stored
server-side: a session ends when its cookie expires or its holder signs out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.responses import Response

from frontdesk.sealing.session_csrf import SessionCsrf
from frontdesk.sealing.signing import Signer

COOKIE_NAME = "frontdesk_console"
COOKIE_PATH = "/console/"
# A working session, shorter than a day: a stolen cookie stays good until it expires.
SESSION_TTL_SECONDS = 60 * 60


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    email: str
    # The company whose staff signed in; None for an operator.
    tenant_key: str | None
    # The cookie's own value: what the CSRF token is derived from.
    value: str

    @property
    def is_operator(self) -> bool:
        return self.tenant_key is None

    def may_open(self, tenant_key: str) -> bool:
        """An operator opens every company, staff only their own."""
        return self.tenant_key is None or self.tenant_key == tenant_key


class ConsoleSessions:
    def __init__(self, secret_keys: Sequence[str]) -> None:
        self._signer = Signer(secret_keys, "console-session/v1")
        self._csrf = SessionCsrf(secret_keys, b"frontdesk/console-csrf/v1")

    def issue(self, email: str, tenant_key: str | None) -> str:
        return self._signer.sign({"e": email, "t": tenant_key}, SESSION_TTL_SECONDS)

    def open(self, value: str | None) -> ConsoleSession | None:
        """The session, when the cookie is ours and unexpired."""
        payload = self._signer.verify(value) if value else None
        if payload is None:
            return None
        email, tenant_key = payload.get("e"), payload.get("t")
        if not isinstance(email, str) or not (tenant_key is None or isinstance(tenant_key, str)):
            return None
        assert value is not None
        return ConsoleSession(email, tenant_key, value)

    def csrf_token(self, session: ConsoleSession) -> str:
        return self._csrf.token(session.value)

    def csrf_matches(self, session: ConsoleSession, token: str | None) -> bool:
        return self._csrf.matches(session.value, token)


def start(response: Response, value: str, *, secure: bool) -> None:
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=SESSION_TTL_SECONDS,
        path=COOKIE_PATH,
        secure=secure,
        httponly=True,
        # Lax: sent when the browser comes back from the staff's login (a top-level
        # redirect), never with another site's POST.
        samesite="lax",
    )


def end(response: Response) -> None:
    response.delete_cookie(COOKIE_NAME, path=COOKIE_PATH, httponly=True)
