"""Signed, stateless session ids: what verifies and what is "unknown" (DESIGN, sessions)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frontdesk.protocol.sessions import Session, SessionSigner

KEY = "session-test-key-0123456789abcdef"
OLD_KEY = "session-old-key-0123456789abcdef"
TTL = 3600
NOW = 1_750_000_000.0
VERSION = "2025-06-18"


def signer(*keys: str) -> SessionSigner:
    return SessionSigner(list(keys) or [KEY], TTL)


def flip(text: str, index: int) -> str:
    """The text with one base64url character changed."""
    replacement = "A" if text[index] != "A" else "B"
    return text[:index] + replacement + text[index + 1 :]


def test_an_issued_id_verifies_for_its_company() -> None:
    """An id verifies to the tenant, protocol version and issue time it was made with."""
    session_id = signer().issue("acme", VERSION, now=NOW)
    assert signer().verify(session_id, "acme", now=NOW) == Session("acme", VERSION, int(NOW))


def test_an_id_is_refused_for_another_company() -> None:
    """Another company's id is unknown here."""
    session_id = signer().issue("globex", VERSION, now=NOW)
    assert signer().verify(session_id, "acme", now=NOW) is None


def test_an_id_signed_with_another_key_is_refused() -> None:
    """An id made with a key this service does not hold is forged."""
    session_id = signer("some-other-key-0123456789abcdefgh").issue("acme", VERSION, now=NOW)
    assert signer().verify(session_id, "acme", now=NOW) is None


def test_a_tampered_signature_is_refused() -> None:
    """Changing one character of the signature breaks the id."""
    session_id = signer().issue("acme", VERSION, now=NOW)
    assert signer().verify(flip(session_id, len(session_id) - 2), "acme", now=NOW) is None


def test_a_tampered_payload_is_refused() -> None:
    """Changing one character of the payload breaks the id."""
    session_id = signer().issue("acme", VERSION, now=NOW)
    assert signer().verify(flip(session_id, 3), "acme", now=NOW) is None


def test_another_companys_signature_does_not_cover_this_payload() -> None:
    """A payload naming this company, joined to a signature made for another, is refused."""
    payload, _ = signer("some-other-key-0123456789abcdefgh").issue("acme", VERSION).split(".")
    _, signature = signer().issue("globex", VERSION).split(".")
    assert signer().verify(f"{payload}.{signature}", "acme") is None


def test_an_id_lasts_exactly_its_lifetime() -> None:
    """An id is good up to the TTL after it was issued and unknown one second later."""
    session_id = signer().issue("acme", VERSION, now=NOW)
    assert signer().verify(session_id, "acme", now=NOW + TTL) is not None
    assert signer().verify(session_id, "acme", now=NOW + TTL + 1) is None


def test_an_id_issued_far_in_the_future_is_refused() -> None:
    """An issue time beyond a minute of clock skew is not one we made."""
    session_id = signer().issue("acme", VERSION, now=NOW + 120)
    assert signer().verify(session_id, "acme", now=NOW) is None


def test_an_id_within_a_minute_of_clock_skew_verifies() -> None:
    """Instances whose clocks differ by less than a minute accept each other's ids."""
    session_id = signer().issue("acme", VERSION, now=NOW + 30)
    assert signer().verify(session_id, "acme", now=NOW) is not None


def test_the_first_key_signs() -> None:
    """With two keys, new ids are signed with the first, so dropping the second keeps them."""
    session_id = signer(KEY, OLD_KEY).issue("acme", VERSION, now=NOW)
    assert signer(KEY).verify(session_id, "acme", now=NOW) is not None
    assert signer(OLD_KEY).verify(session_id, "acme", now=NOW) is None


def test_an_id_signed_with_a_rotated_out_key_verifies_while_it_is_listed() -> None:
    """Every configured key verifies: an id under the old key survives a rotation."""
    session_id = signer(OLD_KEY).issue("acme", VERSION, now=NOW)
    assert signer(KEY, OLD_KEY).verify(session_id, "acme", now=NOW) is not None
    assert signer(KEY).verify(session_id, "acme", now=NOW) is None


def test_an_over_long_id_is_refused() -> None:
    """An id padded to thousands of characters is refused."""
    session_id = signer().issue("acme", VERSION, now=NOW)
    assert signer().verify(session_id + "A" * 5000, "acme", now=NOW) is None


def test_an_id_without_a_signature_is_refused() -> None:
    """A value with no ``.signature`` part is not an id."""
    session_id = signer().issue("acme", VERSION, now=NOW)
    assert signer().verify(session_id.split(".")[0], "acme", now=NOW) is None


@settings(database=None, max_examples=300, deadline=None)
@given(st.text(max_size=600))
def test_any_text_is_refused_without_raising(session_id: str) -> None:
    """Whatever a client sends as an id, verify answers None and never raises."""
    assert signer().verify(session_id, "acme", now=NOW) is None


@settings(database=None, max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=8))
def test_a_non_ascii_signature_is_refused_without_raising(garbage: str) -> None:
    """A header with bytes beyond ASCII (decoded as latin-1) is refused, never a crash."""
    payload = signer().issue("acme", VERSION, now=NOW).split(".")[0]
    assert signer().verify(f"{payload}.\xff{garbage}", "acme", now=NOW) is None
