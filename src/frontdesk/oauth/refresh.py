"""What presenting a refresh token means, decided in one place.

``decide`` reads a plain record of what the store holds for the token and answers one of:

- ``Rotate``: the token is spendable; spend it and issue the next pair.
- ``Reuse``: the token was spent already. A refresh token works once (interface 3.2): one copy
  is in the wrong hands, so the whole family ends (RFC 9700 4.14.2).
- ``Retry``: only where the company chose a retry window (``signin.refresh_retry_seconds``,
  0 by default, at most 60): the token was spent within that window, the refresh token of
  the pair its rotation produced is unspent, and that pair was kept (oauth.kept_pairs).
  The client lost the answer (it gave up before a slow database answered, or the answer
  was cut off, or it sent two refreshes at once): it gets the same pair again. No new pair
  is issued, so exactly one pair stays live and the grant does not end.
- ``Refuse``: an error to answer, nothing changed.

A storage backend executes a decision as a compare-and-set on the state it was made from
(oauth.storage); when a concurrent change makes that fail, the grant reads and decides
again. No rule lives anywhere else.

What a thief holding a spent token can do inside a company's window: receive the same pair
the rightful client received, no more (it cannot widen the scope, and the window does not
slide). The two then hold one pair; whichever of them refreshes second presents a spent
token after the successor was spent, which is reuse and ends the family for both. With no
window (the default), the thief's presentation itself ends the family.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from frontdesk.oauth.errors import InvalidGrant, InvalidScope, OAuthError
from frontdesk.oauth.kept_pairs import KeptPair
from frontdesk.store.grant_records import RefreshState


@dataclass(frozen=True, slots=True)
class Rotate:
    state: RefreshState


@dataclass(frozen=True, slots=True)
class Retry:
    state: RefreshState
    # The pair the rotation answered, to be answered again.
    pair: KeptPair


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
    kept: KeptPair | None,
) -> Decision:
    """What presenting this token means for this client asking for ``requested`` scopes
    (those the service offers; the rest were dropped, RFC 6749 3.3), under the company's
    ``retry_window`` (zero: none), given the pair its rotation ``kept``, opened."""
    # Another client's token is treated as unknown: nothing about it is revealed.
    if state is None or state.client_id != client_id or state.family_revoked:
        return Refuse(InvalidGrant(REFUSED))
    widens = not requested <= frozenset(state.scope.split())
    if state.rotated_at is not None:
        successor = state.successor
        if (
            retry_window > timedelta(0)
            and kept is not None
            and successor is not None
            and not successor.refresh_spent
            # The window is counted from the rotation, so retries never extend it.
            and now < state.rotated_at + retry_window
        ):
            if widens:
                return Refuse(InvalidScope("a refresh cannot widen the granted scope"))
            return Retry(state, kept)
        return Reuse(state.family_id)
    if state.expires_at <= now:
        return Refuse(InvalidGrant(REFUSED))
    if widens:
        return Refuse(InvalidScope("a refresh cannot widen the granted scope"))
    return Rotate(state)
