"""Signed, expiring values that travel through clients and browsers and come back.

A value is ``<base64url JSON>.<base64url HMAC-SHA256>``. Keys are derived per purpose from
the operator's secret keys, so a value signed for one purpose (a session id, a sign-in in
progress) is never accepted as another. The first key signs; every key verifies, so a
new key can be rolled in without invalidating what is already out there.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Sequence
from typing import Any

import orjson

MAX_SIGNED_LENGTH = 4096


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    def __init__(self, secret_keys: Sequence[str], purpose: str) -> None:
        label = f"frontdesk/{purpose}".encode()
        self._keys = [hmac.new(key.encode(), label, hashlib.sha256).digest() for key in secret_keys]

    def sign(self, payload: dict[str, Any], ttl_seconds: float, now: float | None = None) -> str:
        issued = time.time() if now is None else now
        body = b64encode(orjson.dumps({**payload, "exp": int(issued + ttl_seconds)}))
        return f"{body}.{self._mac(self._keys[0], body)}"

    def verify(self, value: str, now: float | None = None) -> dict[str, Any] | None:
        """The payload, or None when the value is forged, malformed or expired."""
        # Values come from browsers and clients: anything but short ASCII is not ours.
        if len(value) > MAX_SIGNED_LENGTH or not value.isascii():
            return None
        body, dot, mac = value.partition(".")
        if not dot:
            return None
        if not any(hmac.compare_digest(self._mac(key, body), mac) for key in self._keys):
            return None
        try:
            payload = orjson.loads(b64decode(body))
        except ValueError:
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("exp"), int):
            return None
        if payload["exp"] < (time.time() if now is None else now):
            return None
        return payload

    @staticmethod
    def _mac(key: bytes, body: str) -> str:
        return b64encode(hmac.new(key, body.encode("ascii", "replace"), hashlib.sha256).digest())
