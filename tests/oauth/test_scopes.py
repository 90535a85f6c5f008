"""Scope resolution (DESIGN: profile and email; none requested means both; anything we do
not offer is dropped, not refused, RFC 6749 3.3)."""

from __future__ import annotations

import pytest

from frontdesk import scopes


@pytest.mark.parametrize("requested", [None, "", "   "])
def test_no_scope_means_every_supported_scope(requested: str | None) -> None:
    """Nothing asked: profile and email."""
    assert scopes.resolve(requested) == "profile email"


@pytest.mark.parametrize(
    ("requested", "granted"),
    [
        ("email", "email"),
        ("profile", "profile"),
        ("email profile", "profile email"),
        ("profile email", "profile email"),
        ("email  email", "email"),
        (" email ", "email"),
    ],
)
def test_supported_scopes_are_granted_in_a_stable_order(requested: str, granted: str) -> None:
    """What was asked for, once each, in the order of the supported list."""
    assert scopes.resolve(requested) == granted


@pytest.mark.parametrize(
    ("requested", "granted"),
    [
        ("openid", "profile email"),
        ("offline_access", "profile email"),
        ("openid offline_access", "profile email"),
        ("openid email", "email"),
        ("offline_access profile openid", "profile"),
    ],
)
def test_openid_and_offline_access_are_dropped_not_refused(requested: str, granted: str) -> None:
    """Habitual scopes are ignored; alone they count as asking for nothing."""
    assert scopes.resolve(requested) == granted


@pytest.mark.parametrize(
    ("requested", "granted"),
    [
        # What Claude sends in the wild.
        ("claudeai", "profile email"),
        ("read write", "profile email"),
        ("email admin", "email"),
        ("Email", "profile email"),
        ("email,profile", "profile email"),
        ("phone address profile", "profile"),
    ],
)
def test_any_other_scope_is_dropped_not_refused(requested: str, granted: str) -> None:
    """Unknown or differently spelt scopes are ignored; alone they count as asking for none."""
    assert scopes.resolve(requested) == granted


@pytest.mark.parametrize(
    ("requested", "offered"),
    [(None, set()), ("", set()), ("claudeai", set()), ("email admin openid", {"email"})],
)
def test_offered_keeps_only_what_the_service_offers(
    requested: str | None, offered: set[str]
) -> None:
    """The scopes of a request that the service can grant, the rest dropped."""
    assert scopes.offered(requested) == offered


def test_the_supported_scopes_are_profile_and_email() -> None:
    """The contract's two scopes, nothing more (interface 2.1)."""
    assert set(scopes.SUPPORTED) == {"profile", "email"}
