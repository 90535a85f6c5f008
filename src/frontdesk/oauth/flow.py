"""A sign-in in progress, carried signed between authorize, consent, login and callback.

Nothing about a pending sign-in is stored: the validated authorize request travels as a
signed, expiring value, and is bound to the customer's browser by a random value set in
an HttpOnly cookie. A step accepts the value only when the signature holds, it has not
expired, it names this company, and the cookie matches, so no step trusts anything the
browser could change, and a link sent to someone else does nothing.

The sealed value is signed, not encrypted, and it travels as the ``state`` the company's
identity provider sees: so it holds only a keyed digest of the cookie (``binding``), from
which the cookie cannot be recovered, and a party that reads the state still cannot pose
as the customer's browser.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from frontdesk.login.connector import LoginAttempt
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.signing import Signer

FLOW_TTL_SECONDS = 15 * 60
COOKIE_NAME = "frontdesk_signin"


def _expired() -> AuthorizePage:
    # A new exception each time: one instance raised again and again would gather every
    # raise's traceback.
    return AuthorizePage(
        400,
        "This sign-in has expired",
        "Start again from your assistant: it will open a fresh sign-in page.",
    )


@dataclass(frozen=True, slots=True)
class Flow:
    tenant_key: str
    client_id: str
    redirect_uri: str
    state: str | None
    code_challenge: str
    scope: str
    resource: str | None
    # HMAC of the browser's cookie under our key: the cookie itself never travels here.
    binding: str


class FlowSigner:
    def __init__(self, secret_keys: Sequence[str]) -> None:
        self._signer = Signer(secret_keys, "signin-flow/v1")
        # One derived secret per key: the first makes bindings and connector secrets, every
        # one verifies a binding, so sign-ins in progress survive a key rotation.
        self._secrets = [
            hmac.new(key.encode(), b"frontdesk/signin-secret/v1", hashlib.sha256).digest()
            for key in secret_keys
        ]
        self._secret = self._secrets[0]

    def new_binding(self) -> tuple[str, str]:
        """A fresh cookie value for the customer's browser, and the binding a flow keeps."""
        cookie = secrets.token_urlsafe(24)
        return cookie, self.binding_of(cookie)

    def binding_of(self, cookie: str, secret: bytes | None = None) -> str:
        key = self._secret if secret is None else secret
        return hmac.new(key, b"binding:" + cookie.encode(), hashlib.sha256).hexdigest()

    def _binds(self, cookie: str | None, binding: str) -> bool:
        if not cookie:
            return False
        return any(
            hmac.compare_digest(self.binding_of(cookie, secret).encode(), binding.encode())
            for secret in self._secrets
        )

    def seal(self, flow: Flow) -> str:
        return self._signer.sign(asdict(flow), FLOW_TTL_SECONDS)

    def open(self, sealed: str | None, cookie: str | None, tenant_key: str) -> Flow:
        """The flow, or AuthorizePage(400) when it is forged, expired, or not this browser's."""
        payload = self._signer.verify(sealed) if sealed else None
        if payload is None or payload.get("tenant_key") != tenant_key:
            raise _expired()
        payload.pop("exp", None)
        try:
            flow = Flow(**payload)
        except TypeError:
            raise _expired() from None
        if not self._binds(cookie, flow.binding):
            raise _expired()
        return flow

    def attempt(self, flow: Flow, sealed: str, callback_url: str) -> LoginAttempt:
        """What a login connector needs: the sealed flow as state, and a server-side secret."""
        secret = hmac.new(self._secret, flow.binding.encode(), hashlib.sha256).digest()
        return LoginAttempt(state=sealed, secret=secret, callback_url=callback_url)
