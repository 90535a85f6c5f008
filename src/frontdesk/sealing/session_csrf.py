"""The CSRF token tied to a signed session cookie, for the pages that keep one (the
customer's account page, the companies' console).

The token is a keyed digest of the cookie's value: it changes with every session, is never
stored, and cannot be made without both the cookie (HttpOnly, unreadable to a page) and the
operator's key. A page puts it in a hidden field; a form is accepted only when it matches,
compared in constant time (the synchronizer token pattern). Each page derives its keys under
a purpose of its own, so one page's token is never taken by the other.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from frontdesk.sealing.signing import b64encode


class SessionCsrf:
    def __init__(self, secret_keys: Sequence[str], purpose: bytes) -> None:
        # Every key verifies a token, as every key verifies the cookie: a page opened before
        # a key rotation still submits.
        self._keys = [
            hmac.new(key.encode(), purpose, hashlib.sha256).digest() for key in secret_keys
        ]

    def token(self, session_value: str) -> str:
        return self._digest(self._keys[0], session_value)

    def matches(self, session_value: str, token: str | None) -> bool:
        if not token or not token.isascii():
            return False
        return any(
            hmac.compare_digest(self._digest(key, session_value).encode(), token.encode())
            for key in self._keys
        )

    @staticmethod
    def _digest(key: bytes, session_value: str) -> str:
        return b64encode(hmac.new(key, session_value.encode(), hashlib.sha256).digest())
