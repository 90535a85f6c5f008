"""What presenting a refresh token means, decided in one place.

``decide`` reads a plain record of what the store holds for the token and answers one of:

- ``Rotate``: the token is spendable; spend it and issue the next pair.
- ``Retry``: the token was spent, but the pair its rotation produced has never been used
  (its refresh token unspent, its access token never presented at the MCP endpoint) and
  the grace window, counted from that first rotation, is still open. The client lost the
  answer (it gave up before a slow database answered, or the answer was cut off): the unused
  pair is revoked and a fresh one issued, so the customer stays signed in.
- ``Reuse``: any other presentation of a spent token; one copy is in the wrong hands, so the
  whole family ends (RFC 9700 4.14.2).
- ``Refuse``: an error to answer, nothing changed.

A storage backend executes a decision as a compare-and-set on the state it was made from
(oauth.storage); when a concurrent change makes that fail, the grant reads and decides
again. No rule lives anywhere else.

Why a retry is safe enough: only a pair nobody has used can be superseded, and a thief who
retries with a stolen spent token within the window revokes the rightful client's unused
pair, whose next refresh then reads as reuse and ends the family, thief's pair included.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from frontdesk.grant_records import IssuedPair, RefreshState
from frontdesk.oauth.errors import InvalidGrant, InvalidScope, OAuthError


@dataclass(frozen=True, slots=True)
class Rotate:
    state: RefreshState


@dataclass(frozen=True, slots=True)
class Retry:
    state: RefreshState
    superseded: IssuedPair


@dataclass(frozen=True, slots=True)
class Reuse:
    family_id: int


@dataclass(frozen=True, slots=True)
class Refuse:
    error: OAuthError


Decision = Rotate | Retry | Reuse | Refuse

REFUSED = "the refresh token is unknown, spent, revoked or expired"


def decide(
    state: RefreshState | None,
    client_id: str,
    requested: frozenset[str],
    now: datetime,
    retry_window: timedelta,
) -> Decision:
    """What presenting this token means for this client asking for ``requested`` scopes
    (those the service offers; the rest were dropped, RFC 6749 3.3)."""
    # Another client's token is treated as unknown: nothing about it is revealed.
    if state is None or state.client_id != client_id or state.family_revoked:
        return Refuse(InvalidGrant(REFUSED))
    widens = not requested <= frozenset(state.scope.split())
    if state.rotated_at is not None:
        successor = state.successor
        if (
            retry_window > timedelta(0)
            and successor is not None
            and successor.never_used
            and now < state.rotated_at + retry_window
        ):
            if widens:
                return Refuse(InvalidScope("a refresh cannot widen the granted scope"))
            return Retry(state, successor)
        return Reuse(state.family_id)
    if state.expires_at <= now:
        return Refuse(InvalidGrant(REFUSED))
    if widens:
        return Refuse(InvalidScope("a refresh cannot widen the granted scope"))
    return Rotate(state)
