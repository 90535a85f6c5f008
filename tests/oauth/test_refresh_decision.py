"""The one refresh decision (oauth.refresh.decide), on plain records: rotate, retry, reuse
or refuse, with no store behind it."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from frontdesk.grant_records import IssuedPair, RefreshState
from frontdesk.oauth.errors import InvalidGrant, InvalidScope
from frontdesk.oauth.refresh import (
    Decision,
    Refuse,
    Retry,
    Reuse,
    Rotate,
    decide,
)

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=60)
CLIENT = "fdc_client"
UNUSED = IssuedPair(
    refresh_hash="next-refresh",
    refresh_spent=False,
    access_hash="next-access",
    access_presented=False,
    access_revoked=False,
)
UNSPENT = RefreshState(
    family_id=7,
    client_id=CLIENT,
    scope="profile email",
    expires_at=NOW + timedelta(days=30),
    rotated_at=None,
    family_revoked=False,
    successor=None,
)
ROTATED = dataclasses.replace(UNSPENT, rotated_at=NOW - timedelta(seconds=5), successor=UNUSED)


def decided(
    state: RefreshState | None,
    requested: frozenset[str] = frozenset(),
    *,
    client_id: str = CLIENT,
    window: timedelta = WINDOW,
) -> Decision:
    return decide(state, client_id, requested, NOW, window)


def refused_with(decision: Decision) -> str:
    assert isinstance(decision, Refuse), decision
    return decision.error.error


def test_an_unspent_live_token_rotates() -> None:
    """A token of this client, unspent, unexpired, family live: rotate."""
    assert decided(UNSPENT) == Rotate(UNSPENT)


def test_a_narrower_or_equal_scope_rotates() -> None:
    """Asking for part or all of the granted scope rotates."""
    assert decided(UNSPENT, frozenset({"email"})) == Rotate(UNSPENT)
    assert decided(UNSPENT, frozenset({"email", "profile"})) == Rotate(UNSPENT)


@pytest.mark.parametrize(
    "state",
    [
        None,
        dataclasses.replace(UNSPENT, client_id="fdc_other"),
        dataclasses.replace(UNSPENT, family_revoked=True),
        dataclasses.replace(UNSPENT, expires_at=NOW),
        dataclasses.replace(ROTATED, family_revoked=True),
    ],
    ids=["unknown", "another-client", "family-revoked", "expired", "spent-family-revoked"],
)
def test_tokens_that_cannot_be_spent_are_refused_as_invalid_grant(
    state: RefreshState | None,
) -> None:
    """Unknown, another client's, of a revoked family, or expired: invalid_grant, no change."""
    assert refused_with(decided(state)) == InvalidGrant.error


def test_a_wider_scope_is_invalid_scope() -> None:
    """Asking for an offered scope the grant lacks: invalid_scope."""
    narrow = dataclasses.replace(UNSPENT, scope="email")
    assert refused_with(decided(narrow, frozenset({"profile"}))) == InvalidScope.error


def test_a_spent_token_whose_pair_is_unused_within_the_window_is_a_retry() -> None:
    """Spent five seconds ago, its pair never used: retry, superseding that pair."""
    assert decided(ROTATED) == Retry(ROTATED, UNUSED)


def test_a_retry_that_widens_the_scope_is_invalid_scope() -> None:
    """A retry asking for more than the grant: invalid_scope, not a new pair."""
    narrow = dataclasses.replace(ROTATED, scope="email")
    assert refused_with(decided(narrow, frozenset({"profile"}))) == InvalidScope.error


@pytest.mark.parametrize(
    "successor",
    [
        dataclasses.replace(UNUSED, access_presented=True),
        dataclasses.replace(UNUSED, refresh_spent=True),
        dataclasses.replace(UNUSED, access_revoked=True),
        dataclasses.replace(UNUSED, access_hash=None),
        None,
    ],
    ids=["access-used", "refresh-spent", "access-revoked", "pair-unknown", "superseded"],
)
def test_a_spent_token_whose_pair_was_used_is_reuse(successor: IssuedPair | None) -> None:
    """Any sign that the pair reached someone (or no pair to tell by): reuse, revoke."""
    state = dataclasses.replace(ROTATED, successor=successor)
    assert decided(state) == Reuse(ROTATED.family_id)


def test_the_window_counts_from_the_first_rotation() -> None:
    """Rotated exactly the window ago: reuse, however recent a retry since."""
    state = dataclasses.replace(ROTATED, rotated_at=NOW - WINDOW)
    assert decided(state) == Reuse(ROTATED.family_id)
    just_inside = dataclasses.replace(ROTATED, rotated_at=NOW - WINDOW + timedelta(seconds=1))
    assert decided(just_inside) == Retry(just_inside, UNUSED)


def test_a_window_of_zero_turns_retries_off() -> None:
    """With no window every second presentation is reuse, even one rotated in the future
    of this clock (another instance's clock ahead)."""
    assert decided(ROTATED, window=timedelta(0)) == Reuse(ROTATED.family_id)
    ahead = dataclasses.replace(ROTATED, rotated_at=NOW + timedelta(seconds=2))
    assert decided(ahead, window=timedelta(0)) == Reuse(ROTATED.family_id)


def test_an_expired_spent_token_is_still_reuse() -> None:
    """A spent token past its lifetime whose pair is in use: reuse (the family ends)."""
    state = dataclasses.replace(
        ROTATED, expires_at=NOW - timedelta(days=1), successor=None, rotated_at=NOW - WINDOW * 2
    )
    assert decided(state) == Reuse(ROTATED.family_id)
