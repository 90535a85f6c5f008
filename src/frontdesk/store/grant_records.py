"""The grants as plain typed objects: what the store keeps for codes and tokens, and what
the OAuth side decides over (oauth.grants, oauth.refresh). Part of the domain model at the
bottom of the house: the store and the OAuth side both import it, and it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    # The tool versions the customer allowed (store.tool_versions); None: not held to any.
    tool_snapshot: str | None = None


@dataclass(frozen=True, slots=True)
class NewTokens:
    """Hashes and expiry times of a pair about to be issued."""

    access_hash: str
    access_expires_at: datetime
    refresh_hash: str
    refresh_expires_at: datetime


class AccessRecord(NamedTuple):
    """A live access token's grant: read on every signed-in call, so a tuple (cheaper to
    build than a frozen dataclass: docs/decisions/hot-path-records.md). Its expiry is not
    among its fields: the lookup's statement compares it, and decoding the timestamp for
    nothing cost each signed-in call a datetime."""

    client_id: str
    scope: str
    resource: str | None
    subject: str
    email: str | None
    name: str | None
    email_verified: bool
    # The tool versions the grant's consent covered (oauth.tool_consent); None: unchecked.
    tool_snapshot: str | None = None


class Ending(NamedTuple):
    """Why token families end, as the OAuth side decides it (oauth.grants) and the store
    carries it out: the reason the audit log gives, and whether the customer's remembered
    consent to the client ends with them (store.consents)."""

    reason: str
    forgets_consent: bool


# The longest retry window a company may choose (companies.definition, oauth.refresh): for
# that long a spent refresh token still holds its successor pair, sealed.
REFRESH_RETRY_MAX_SECONDS = 60


@dataclass(frozen=True, slots=True)
class IssuedPair:
    """The pair a refresh token's rotation produced, as the store holds it now."""

    refresh_hash: str
    refresh_spent: bool


@dataclass(frozen=True, slots=True)
class RefreshState:
    """What the store holds for one refresh token of a company."""

    family_id: int
    client_id: str
    scope: str
    expires_at: datetime
    # When the token was spent.
    rotated_at: datetime | None
    family_revoked: bool
    # What its rotation produced; None while unspent.
    successor: IssuedPair | None
    # That pair in clear, sealed under the data keys (oauth.kept_pairs), when the company
    # lets a lost answer be asked for again; None otherwise, and once the purge cleared it.
    # Left out of the repr: a record printed in a traceback carries no token, sealed or not.
    kept_successor: str | None = field(repr=False)
