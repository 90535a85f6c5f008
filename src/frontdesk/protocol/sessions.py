"""Signed, stateless ``Mcp-Session-Id`` values.

An id is ``<payload>.<signature>``: the payload holds the tenant key, the negotiated
protocol version and the issue time; the signature is HMAC-SHA256 under the first secret
key. Any instance holding the keys verifies it, so no session is stored anywhere. Every
configured key verifies, so a new key can be rolled in without ending live sessions.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Sequence
from dataclasses import dataclass

# Keys are derived per purpose, so a session signature can never be replayed as any
# other signed value the service makes with the same secret.
_PURPOSE = b"frontdesk/mcp-session/v1"


@dataclass(frozen=True, slots=True)
class Session:
    tenant_key: str
    protocol_version: str
    issued_at: int


def _derive(secret: str) -> bytes:
    return hmac.new(secret.encode(), _PURPOSE, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionSigner:
    def __init__(self, secret_keys: Sequence[str], ttl_seconds: int) -> None:
        self._keys = [_derive(secret) for secret in secret_keys]
        self._ttl = ttl_seconds

    def issue(self, tenant_key: str, protocol_version: str, now: float | None = None) -> str:
        issued_at = int(time.time() if now is None else now)
        payload = _b64(f"{tenant_key}|{protocol_version}|{issued_at}".encode())
        return f"{payload}.{self._sign(self._keys[0], payload)}"

    def verify(self, session_id: str, tenant_key: str, now: float | None = None) -> Session | None:
        """The session, or None when the id is forged, expired or another company's."""
        payload, dot, signature = session_id.partition(".")
        if not dot or len(session_id) > 512:
            return None
        if not any(hmac.compare_digest(self._sign(key, payload), signature) for key in self._keys):
            return None
        try:
            key, version, issued = _unb64(payload).decode().split("|")
            issued_at = int(issued)
        except ValueError:
            return None
        current = time.time() if now is None else now
        if key != tenant_key or not issued_at <= current + 60 or current - issued_at > self._ttl:
            return None
        return Session(key, version, issued_at)

    @staticmethod
    def _sign(key: bytes, payload: str) -> str:
        return _b64(hmac.new(key, payload.encode("ascii", "replace"), hashlib.sha256).digest())
