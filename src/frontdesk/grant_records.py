"""The grants as plain typed objects: what the store keeps for codes and tokens, and what
the OAuth side decides over (oauth.grants, oauth.refresh). Part of the domain model at the
bottom of the house: the store and the OAuth side both import it, and it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class CodeRecord:
    client_id: str
    customer_id: int
    redirect_uri: str
    code_challenge: str
    scope: str
    resource: str | None
    expires_at: datetime
    used_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewTokens:
    """Hashes and expiry times of a pair about to be issued."""

    access_hash: str
    access_expires_at: datetime
    refresh_hash: str
    refresh_expires_at: datetime


class AccessRecord(NamedTuple):
    """A live access token's grant: read on every signed-in call, so a tuple (a frozen
    dataclass costs three times as much to build). Its expiry is not among its fields: the
    lookup's statement compares it, and decoding the timestamp for nothing cost each
    signed-in call a datetime."""

    client_id: str
    scope: str
    resource: str | None
    subject: str
    email: str | None
    name: str | None
    email_verified: bool


@dataclass(frozen=True, slots=True)
class IssuedPair:
    """The pair a refresh token's rotation produced, as the store holds it now."""

    refresh_hash: str
    refresh_spent: bool
    # None for a pair issued before the store linked refresh tokens to their access tokens:
    # whether it was used cannot be told, so it counts as used.
    access_hash: str | None
    access_presented: bool
    access_revoked: bool

    @property
    def never_used(self) -> bool:
        return (
            self.access_hash is not None
            and not self.refresh_spent
            and not self.access_presented
            and not self.access_revoked
        )


@dataclass(frozen=True, slots=True)
class RefreshState:
    """What the store holds for one refresh token of a company."""

    family_id: int
    client_id: str
    scope: str
    expires_at: datetime
    # When the token was first spent: a retry issues a new pair but leaves this as it is,
    # so the grace window does not slide.
    rotated_at: datetime | None
    family_revoked: bool
    # What the latest rotation (or retry) produced; None while unspent, or when the
    # produced pair was itself superseded.
    successor: IssuedPair | None
