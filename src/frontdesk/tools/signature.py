"""How Frontdesk signs the calls it forwards to a company's backend.

Headers on every call:

    Frontdesk-Timestamp: 1795243646                 unix seconds when the call was signed
    Frontdesk-Signature: v1=<hex HMAC-SHA256>       over "<timestamp>.<raw body>"
    Frontdesk-Request-Id: 8e6fb5f808517c57          also in Frontdesk's own logs

The backend recomputes the HMAC with the company's secret over the exact bytes it
received, compares in constant time, refuses timestamps more than ``TOLERANCE_SECONDS``
away from its clock, and refuses a signature it has already accepted within that window
(replay). ``examples/backend.py`` does exactly this.
"""

from __future__ import annotations

import hashlib
import hmac

TOLERANCE_SECONDS = 300
VERSION = "v1"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"{VERSION}={mac.hexdigest()}"


def headers(secret: str, timestamp: int, body: bytes, request_id: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "frontdesk-timestamp": str(timestamp),
        "frontdesk-signature": signature(secret, timestamp, body),
        "frontdesk-request-id": request_id,
    }


def verify(secret: str, timestamp: str, body: bytes, given: str, now: float) -> bool:
    """The backend's check, for Python backends that can import Frontdesk."""
    try:
        moment = int(timestamp)
    except ValueError:
        return False
    if abs(now - moment) > TOLERANCE_SECONDS:
        return False
    return hmac.compare_digest(signature(secret, moment, body), given)
