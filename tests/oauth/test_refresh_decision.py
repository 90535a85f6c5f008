"""The one refresh decision (oauth.refresh.decide), on plain records: rotate, reuse, refuse,
or, only where the company chose a retry window, retry with the kept pair; no store behind
it."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from frontdesk.oauth.errors import InvalidGrant, InvalidScope
from frontdesk.oauth.kept_pairs import KeptPair
from frontdesk.oauth.refresh import (
    Decision,
    Refuse,
    Retry,
    Reuse,
    Rotate,
    decide,
)
from frontdesk.store.grant_records import IssuedPair, RefreshState

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=30)
NO_WINDOW = timedelta(0)
CLIENT = "fdc_client"
UNSPENT_SUCCESSOR = IssuedPair(refresh_hash="next-refresh", refresh_spent=False)
KEPT = KeptPair("fdat_kept", "fdrt_kept", NOW + timedelta(minutes=59))
UNSPENT = RefreshState(
    family_id=7,
    client_id=CLIENT,
    scope="profile email",
    expires_at=NOW + timedelta(days=30),
    rotated_at=None,
    family_revoked=False,
    successor=None,
    kept_successor=None,
)
ROTATED = dataclasses.replace(
    UNSPENT,
    rotated_at=NOW - timedelta(seconds=5),
    successor=UNSPENT_SUCCESSOR,
    kept_successor="fd1.sealed",
)


def decided(
    state: RefreshState | None,
    requested: frozenset[str] = frozenset(),
    *,
    client_id: str = CLIENT,
    window: timedelta = WINDOW,
    kept: KeptPair | None = KEPT,
) -> Decision:
    return decide(state, client_id, requested, NOW, window, kept)


def refused_with(decision: Decision) -> str:
    assert isinstance(decision, Refuse), decision
    return decision.error.error


def test_an_unspent_live_token_rotates() -> None:
    """A token of this client, unspent, unexpired, family live: rotate, window or none."""
    assert decided(UNSPENT, kept=None) == Rotate(UNSPENT)
    assert decided(UNSPENT, window=NO_WINDOW, kept=None) == Rotate(UNSPENT)


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
        dataclasses.replace(ROTATED, client_id="fdc_other"),
    ],
    ids=[
        "unknown",
        "another-client",
        "family-revoked",
        "expired",
        "spent-family-revoked",
        "spent-another-client",
    ],
)
def test_tokens_that_cannot_be_spent_are_refused_as_invalid_grant(
    state: RefreshState | None,
) -> None:
    """Unknown, another client's, of a revoked family, or expired: invalid_grant, no change
    (another client's spent token is no retry of its pair either)."""
    assert refused_with(decided(state)) == InvalidGrant.error


def test_a_wider_scope_is_invalid_scope() -> None:
    """Asking for an offered scope the grant lacks: invalid_scope."""
    narrow = dataclasses.replace(UNSPENT, scope="email")
    assert refused_with(decided(narrow, frozenset({"profile"}))) == InvalidScope.error


def test_with_no_window_a_spent_token_is_always_reuse() -> None:
    """The contract's rule (interface 3.2, RFC 9700 4.14.2): a refresh token works once; its
    second presentation ends the family, its pair unspent or not, a pair kept or not, even
    one rotated in the future of this clock (another instance's clock ahead)."""
    assert decided(ROTATED, window=NO_WINDOW) == Reuse(ROTATED.family_id)
    assert decided(ROTATED, window=NO_WINDOW, kept=None) == Reuse(ROTATED.family_id)
    ahead = dataclasses.replace(ROTATED, rotated_at=NOW + timedelta(seconds=2))
    assert decided(ahead, window=NO_WINDOW) == Reuse(ROTATED.family_id)


def test_within_the_window_a_spent_token_whose_successor_is_unspent_is_a_retry() -> None:
    """Spent five seconds ago in a company with a window, its successor refresh token
    unspent, the pair kept: retry, answering that same pair."""
    assert decided(ROTATED) == Retry(ROTATED, KEPT)


def test_a_retry_that_widens_the_scope_is_invalid_scope() -> None:
    """A retry asking for more than the grant: invalid_scope, not the pair."""
    narrow = dataclasses.replace(ROTATED, scope="email")
    assert refused_with(decided(narrow, frozenset({"profile"}))) == InvalidScope.error


@pytest.mark.parametrize(
    ("state", "kept"),
    [
        (dataclasses.replace(ROTATED, successor=IssuedPair("next-refresh", True)), KEPT),
        (ROTATED, None),
        (dataclasses.replace(ROTATED, successor=None), KEPT),
    ],
    ids=["successor-spent", "no-pair-kept", "no-successor"],
)
def test_within_the_window_a_spent_token_is_still_reuse_without_its_pair(
    state: RefreshState, kept: KeptPair | None
) -> None:
    """The successor refresh token already spent, or no pair to answer again (none kept, or
    it would not open): reuse, the family ends."""
    assert decided(state, kept=kept) == Reuse(ROTATED.family_id)


def test_the_window_counts_from_the_rotation() -> None:
    """Rotated exactly the window ago: reuse; a second less: retry."""
    state = dataclasses.replace(ROTATED, rotated_at=NOW - WINDOW)
    assert decided(state) == Reuse(ROTATED.family_id)
    just_inside = dataclasses.replace(ROTATED, rotated_at=NOW - WINDOW + timedelta(seconds=1))
    assert decided(just_inside) == Retry(just_inside, KEPT)


def test_an_expired_spent_token_is_still_reuse() -> None:
    """A spent token past its lifetime: reuse (the family ends)."""
    state = dataclasses.replace(
        ROTATED, expires_at=NOW - timedelta(days=1), successor=None, rotated_at=NOW - WINDOW * 2
    )
    assert decided(state) == Reuse(ROTATED.family_id)


def test_no_token_is_printed_with_a_record() -> None:
    """A record or a kept pair in a traceback or a log line shows no token, sealed or not."""
    assert "fd1.sealed" not in repr(ROTATED)
    assert "fdat_kept" not in repr(KEPT)
    assert "fdrt_kept" not in repr(KEPT)
