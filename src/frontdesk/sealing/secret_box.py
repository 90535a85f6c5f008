"""Secrets encrypted at rest: AES-256-GCM under the operator's data keys.

A sealed value is ``fd1.<key id>.<base64url(nonce || ciphertext || tag)>``. Keys are derived
with HKDF (RFC 5869) from the operator's ``FRONTDESK_DATA_KEYS``; the first seals, every key
opens, so a new key can be rolled in before the old one is retired (as the signing keys
are, signing.py). The key id names the key that sealed a value, so opening needs no trial
of every key, and a value sealed under a key no longer configured is told apart from one
that was tampered with.

Each value is sealed with associated data (NIST SP 800-38D, section 5.2.1) naming what it
belongs to, e.g. a company and a field: a value copied to another place fails to open,
even under the right key.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from frontdesk.sealing.signing import b64decode, b64encode

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

FORMAT = "fd1"
# 96-bit random nonces, as NIST SP 800-38D 8.2.2 allows; a company's few secrets are
# sealed far fewer than the 2^32 times under one key that bound holds for.
NONCE_BYTES = 12
# Longer than any sealed secret Frontdesk writes: the input is bounded before it is decoded.
MAX_SEALED_LENGTH = 16 * 1024


class KeyNotConfigured(Exception):
    """The value was sealed under a key that is not among the configured data keys."""


class CannotOpen(Exception):
    """The value is malformed, altered, or sealed for another place (its associated data)."""


def _derive(key: str, info: bytes, length: int) -> bytes:
    from cryptography.hazmat.primitives.hashes import SHA256
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=SHA256(), length=length, salt=None, info=info).derive(key.encode())


class SecretBox:
    """Keys are derived, and cryptography loaded, with the first value sealed or opened: a
    worker whose companies keep no secret never loads it (docs/decisions/memory.md)."""

    def __init__(self, data_keys: Sequence[str]) -> None:
        if not data_keys:
            raise ValueError("at least one data key is needed")
        self._data_keys = tuple(data_keys)

    @cached_property
    def _keys(self) -> dict[str, AESGCM]:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        keys: dict[str, AESGCM] = {}
        for key in self._data_keys:
            # The id is derived apart from the key (another HKDF info), so it says which key
            # sealed a value without saying anything about the key itself.
            key_id = b64encode(_derive(key, b"frontdesk/data-key-id", 6))
            keys.setdefault(key_id, AESGCM(_derive(key, b"frontdesk/data-key", 32)))
        return keys

    @property
    def current_key_id(self) -> str:
        return next(iter(self._keys))

    def seal(self, plaintext: str, associated: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        current = self.current_key_id
        sealed = self._keys[current].encrypt(nonce, plaintext.encode(), associated.encode())
        return f"{FORMAT}.{current}.{b64encode(nonce + sealed)}"

    def key_id(self, sealed: str) -> str | None:
        """The id of the key ``sealed`` names, or None when it is no sealed value."""
        parts = sealed.split(".")
        if len(parts) != 3 or parts[0] != FORMAT:
            return None
        return parts[1]

    def open(self, sealed: str, associated: str) -> str:
        """The plaintext; KeyNotConfigured or CannotOpen when it cannot be had."""
        from cryptography.exceptions import InvalidTag

        if len(sealed) > MAX_SEALED_LENGTH or not sealed.isascii():
            raise CannotOpen("not a sealed value")
        key_id = self.key_id(sealed)
        if key_id is None:
            raise CannotOpen("not a sealed value")
        key = self._keys.get(key_id)
        if key is None:
            raise KeyNotConfigured(key_id)
        try:
            data = b64decode(sealed.rsplit(".", 1)[1])
        except ValueError:
            raise CannotOpen("not a sealed value") from None
        if len(data) <= NONCE_BYTES:
            raise CannotOpen("not a sealed value")
        try:
            plaintext = key.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], associated.encode())
        except InvalidTag:
            raise CannotOpen("altered, or sealed for another place") from None
        try:
            return plaintext.decode()
        except UnicodeDecodeError:
            raise CannotOpen("not text") from None
