"""PKCE with S256 only (RFC 7636; OAuth 2.1 drops ``plain``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

# RFC 7636 4.1: 43 to 128 characters of the unreserved set. \Z, not $: a $ would also
# accept a trailing newline.
VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}\Z")
# An S256 challenge is a base64url SHA-256: exactly 43 characters.
CHALLENGE = re.compile(r"^[A-Za-z0-9\-_]{43}\Z")


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verify(verifier: str, challenge: str) -> bool:
    if not VERIFIER.match(verifier):
        return False
    return hmac.compare_digest(s256(verifier), challenge)
