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

A flow is spent by its first callback, whatever comes of it: each flow carries a random id,
and the callback records a hash of it (store.spent_flows) before it calls the identity
provider. The record is the one piece of a sign-in that is stored, so that every instance
refuses a second callback, and it is kept only until the flow would have expired anyway.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from frontdesk.login.connector import LoginAttempt
from frontdesk.oauth.errors import AuthorizePage
from frontdesk.sealing.signing import Signer

FLOW_TTL_SECONDS = 15 * 60
COOKIE_NAME = "frontdesk_signin"


def _expired() -> AuthorizePage:
    # A new exception each time: one instance raised again and again would gather every
    # raise's traceback.
    return AuthorizePage(
        400,
        "This sign-in has expired or was already used",
        "Start again from your assistant: it will open a fresh sign-in page.",
    )


def _new_flow_id() -> str:
    return secrets.token_urlsafe(18)


class SpentFlows(Protocol):
    """Where spent flows are recorded (store.spent_flows), shared by every instance."""

    async def spend(self, tenant_key: str, flow_hash: str, expires_at: datetime) -> bool:
        """Record the flow as spent; False when it already was (the first one wins)."""
        ...


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
    # Random, 144 bits: what the callback spends (only its hash is stored).
    flow_id: str = field(default_factory=_new_flow_id)
    # The sealed value's expiry (unix seconds), once opened; not itself sealed (the signed
    # value carries it as ``exp``), nor part of what makes two flows the same.
    expires_at: int | None = field(default=None, compare=False)
    # A sign-in to the customer's own account page (frontdesk.account), not for a client:
    # it ends with the page's session, never with a code. Sealed only when set, so a
    # client's flow is as long as before.
    account: bool = False
    # The customer whose earlier consent skipped the consent page (oauth.remembered): the
    # sign-in issues a code only if that same customer signs in. Sealed only when set.
    consented_by: int | None = None


class FlowSigner:
    def __init__(self, secret_keys: Sequence[str], spent: SpentFlows | None = None) -> None:
        self._signer = Signer(secret_keys, "signin-flow/v1")
        # None only where flows are sealed and opened but never spent (tests); spend()
        # then refuses rather than let a callback run unrecorded.
        self._spent = spent
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
        payload = asdict(flow)
        del payload["expires_at"]
        if not flow.account:
            del payload["account"]
        if flow.consented_by is None:
            del payload["consented_by"]
        return self._signer.sign(payload, FLOW_TTL_SECONDS)

    def open(self, sealed: str | None, cookie: str | None, tenant_key: str) -> Flow:
        """The flow, or AuthorizePage(400) when it is forged, expired, or not this browser's."""
        payload = self._signer.verify(sealed) if sealed else None
        # A flow sealed before flows had ids (at most FLOW_TTL_SECONDS before this version
        # started) could not be spent: it is refused like an expired one.
        if (
            payload is None
            or payload.get("tenant_key") != tenant_key
            or not isinstance(payload.get("flow_id"), str)
        ):
            raise _expired()
        expires_at = payload.pop("exp")
        try:
            flow = Flow(**payload, expires_at=expires_at)
        except TypeError:
            raise _expired() from None
        if not self._binds(cookie, flow.binding):
            raise _expired()
        return flow

    async def spend(self, flow: Flow) -> None:
        """Spend an opened flow; AuthorizePage(400), as for an expired one, when it was
        spent before. Only a hash of its id is recorded, until the flow's own expiry."""
        if self._spent is None or flow.expires_at is None:
            raise RuntimeError("only an opened flow, with a record of spent flows, is spent")
        flow_hash = hashlib.sha256(flow.flow_id.encode()).hexdigest()
        expires_at = datetime.fromtimestamp(flow.expires_at, UTC)
        if not await self._spent.spend(flow.tenant_key, flow_hash, expires_at):
            raise _expired()

    def attempt(self, flow: Flow, sealed: str, callback_url: str) -> LoginAttempt:
        """What a login connector needs: the sealed flow as state, and a server-side secret."""
        secret = hmac.new(self._secret, flow.binding.encode(), hashlib.sha256).digest()
        return LoginAttempt(state=sealed, secret=secret, callback_url=callback_url)
