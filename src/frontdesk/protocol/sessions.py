"""Signed, stateless ``Mcp-Session-Id`` values.

A session id is a signed value (see ``frontdesk.sealing.signing``) holding the tenant key, the
negotiated protocol version and the issue time. Any instance holding the keys verifies
it, so no session is stored anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from frontdesk.sealing.signing import Signer

# An id from the future is refused, allowing this much clock skew between instances.
CLOCK_SKEW_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Session:
    tenant_key: str
    protocol_version: str
    issued_at: int


class SessionSigner:
    def __init__(self, secret_keys: Sequence[str], ttl_seconds: int) -> None:
        self._signer = Signer(secret_keys, "mcp-session/v1")
        self._ttl = ttl_seconds

    def issue(self, tenant_key: str, protocol_version: str, now: float | None = None) -> str:
        issued_at = int(time.time() if now is None else now)
        payload = {"t": tenant_key, "v": protocol_version, "iat": issued_at}
        return self._signer.sign(payload, self._ttl, now=issued_at)

    def verify(self, session_id: str, tenant_key: str, now: float | None = None) -> Session | None:
        """The session, or None when the id is forged, expired or another company's."""
        if not session_id.isascii():
            # Headers may carry any byte, and hmac.compare_digest raises on non-ASCII str;
            # no id we issue holds one.
            return None
        current = time.time() if now is None else now
        payload = self._signer.verify(session_id, now=current)
        if payload is None or payload.get("t") != tenant_key:
            return None
        issued_at, version = payload.get("iat"), payload.get("v")
        if not isinstance(issued_at, int) or not isinstance(version, str):
            return None
        if issued_at > current + CLOCK_SKEW_SECONDS:
            return None
        return Session(tenant_key, version, issued_at)
