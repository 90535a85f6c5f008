"""Signed, expiring values that travel through clients and browsers and come back.

A value is ``<base64url JSON>.<base64url HMAC-SHA256>``, signed by itsdangerous' ``Signer``
with the purpose as its salt, so a value signed for one purpose (a session id, a sign-in in
progress) is never accepted as another. The first of the operator's keys signs; every key
verifies, so a new key can be rolled in without invalidating what is already out there.
The expiry is in the payload: each value's lifetime is chosen where it is signed.

itsdangerous' ``Signer``, not its ``URLSafeSerializer``: the serializer compresses every value
it signs, which costs more than the rest of an MCP call (docs/decisions/signing.md).
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Sequence
from typing import Any

import itsdangerous
import orjson

MAX_SIGNED_LENGTH = 4096


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    def __init__(self, secret_keys: Sequence[str], purpose: str) -> None:
        # itsdangerous signs with the last key of its list; ours is the first.
        self._signer = itsdangerous.Signer(
            list(reversed(secret_keys)),
            salt=f"frontdesk/{purpose}",
            digest_method=hashlib.sha256,
        )

    def sign(self, payload: dict[str, Any], ttl_seconds: float, now: float | None = None) -> str:
        issued = time.time() if now is None else now
        body = b64encode(orjson.dumps({**payload, "exp": int(issued + ttl_seconds)}))
        return self._signer.sign(body).decode("ascii")

    def verify(self, value: str, now: float | None = None) -> dict[str, Any] | None:
        """The payload, or None when the value is forged, malformed or expired."""
        # Values come from browsers and clients: anything but short ASCII is not ours.
        if len(value) > MAX_SIGNED_LENGTH or not value.isascii():
            return None
        try:
            # Every key's MAC is compared with hmac.compare_digest.
            body = self._signer.unsign(value)
            payload = orjson.loads(b64decode(body.decode("ascii")))
        except (itsdangerous.BadSignature, ValueError):
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("exp"), int):
            return None
        if payload["exp"] < (time.time() if now is None else now):
            return None
        return payload
