"""A sign-in in progress, carried signed between authorize, consent, login and callback.

Nothing about a pending sign-in is stored: the validated authorize request travels as a
signed, expiring value, and is bound to the customer's browser by a random nonce that
is also set in an HttpOnly cookie. A step accepts the value only when the signature
holds, it has not expired, it names this company, and the cookie matches, so no step
trusts anything the browser could change, and a link sent to someone else does nothing.
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
    nonce: str


class FlowSigner:
    def __init__(self, secret_keys: Sequence[str]) -> None:
        self._signer = Signer(secret_keys, "signin-flow/v1")
        self._secret = hmac.new(
            secret_keys[0].encode(), b"frontdesk/signin-secret/v1", hashlib.sha256
        ).digest()

    @staticmethod
    def new_nonce() -> str:
        return secrets.token_urlsafe(24)

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
        if cookie is None or not hmac.compare_digest(cookie.encode(), flow.nonce.encode()):
            raise _expired()
        return flow

    def attempt(self, flow: Flow, sealed: str, callback_url: str) -> LoginAttempt:
        """What a login connector needs: the sealed flow as state, and a server-side secret."""
        secret = hmac.new(self._secret, flow.nonce.encode(), hashlib.sha256).digest()
        return LoginAttempt(state=sealed, secret=secret, callback_url=callback_url)
