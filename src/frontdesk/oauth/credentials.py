"""Minting and hashing of codes and tokens.

Tokens are opaque random strings with a short type prefix (so a leaked one is easy to
recognise in a secret scanner); only their SHA-256 is ever stored or compared.
"""

from __future__ import annotations

import hashlib
import secrets
from enum import StrEnum


class Kind(StrEnum):
    ACCESS = "fdat_"
    REFRESH = "fdrt_"
    CODE = "fdac_"
    CLIENT = "fdc_"


def mint(kind: Kind) -> str:
    return kind.value + secrets.token_urlsafe(32)


def digest(value: str) -> str:
    """The stored form of a code or token. A hash lookup needs no constant-time compare:
    the database matches digests, so timing reveals nothing about the secret."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def looks_like(kind: Kind, value: str) -> bool:
    return value.startswith(kind.value) and len(value) < 200
