"""PKCE with S256 only (RFC 7636)."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from frontdesk.oauth import pkce

# RFC 7636 Appendix B.
RFC_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
RFC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

UNRESERVED = string.ascii_letters + string.digits + "-._~"


def test_s256_matches_the_rfc_example() -> None:
    """The challenge of RFC 7636's example verifier is the RFC's."""
    assert pkce.s256(RFC_VERIFIER) == RFC_CHALLENGE


def test_the_rfc_example_verifies() -> None:
    """The example verifier matches its challenge."""
    assert pkce.verify(RFC_VERIFIER, RFC_CHALLENGE)


@given(st.text(alphabet=UNRESERVED, min_size=43, max_size=128))
def test_every_valid_verifier_matches_its_own_challenge(verifier: str) -> None:
    """Any 43-128 character unreserved verifier verifies against its S256 challenge."""
    challenge = pkce.s256(verifier)
    assert pkce.CHALLENGE.match(challenge)
    assert pkce.verify(verifier, challenge)


@given(
    st.text(alphabet=UNRESERVED, min_size=43, max_size=128),
    st.text(alphabet=UNRESERVED, min_size=43, max_size=128),
)
def test_a_different_verifier_does_not_match(verifier: str, other: str) -> None:
    """A verifier other than the one the challenge came from is refused."""
    assume(verifier != other)
    assert not pkce.verify(other, pkce.s256(verifier))


def test_the_challenge_is_not_its_own_verifier() -> None:
    """Replaying the (public) challenge as the verifier fails: plain is not supported."""
    assert not pkce.verify(RFC_CHALLENGE, RFC_CHALLENGE)


@pytest.mark.parametrize(
    "verifier",
    [
        RFC_VERIFIER[:42],
        "a" * 129,
        RFC_VERIFIER[:42] + "=",
        RFC_VERIFIER[:42] + "+",
        RFC_VERIFIER[:42] + "/",
        RFC_VERIFIER[:42] + " ",
        RFC_VERIFIER[:42] + "\u00e9",
        RFC_VERIFIER + "\n",
        "",
    ],
)
def test_verifiers_outside_rfc_7636_are_refused(verifier: str) -> None:
    """Too short, too long, or characters outside the unreserved set: refused, never raised."""
    # Even paired with its own hash, a verifier of the wrong shape is refused.
    challenge = pkce.s256(verifier) if verifier.isascii() else RFC_CHALLENGE
    assert not pkce.verify(verifier, challenge)


@pytest.mark.parametrize(
    "challenge",
    [
        RFC_CHALLENGE[:42],
        RFC_CHALLENGE + "A",
        RFC_CHALLENGE[:42] + "=",
        RFC_CHALLENGE[:42] + "+",
        RFC_CHALLENGE[:42] + "/",
        RFC_CHALLENGE[:42] + ".",
        RFC_CHALLENGE + "\n",
        "",
    ],
)
def test_challenges_that_are_not_a_base64url_sha256_are_refused(challenge: str) -> None:
    """An S256 challenge is exactly 43 base64url characters without padding."""
    assert not pkce.CHALLENGE.match(challenge)


def test_an_rfc_challenge_has_the_s256_shape() -> None:
    """The example challenge is accepted by the shape check authorize applies."""
    assert pkce.CHALLENGE.match(RFC_CHALLENGE)
