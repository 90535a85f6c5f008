"""What an identity provider's ID token may name (login.oidc.identity_from): a subject
Frontdesk cannot keep is a clean sign-in error, never a server error."""

from __future__ import annotations

from typing import Any

import pytest

from frontdesk.login.connector import Identity, LoginFailed
from frontdesk.login.oidc import identity_from


@pytest.mark.parametrize(
    "subject",
    [None, 42, "", "s" * 256, "bad\x00sub", "line\nbreak", "naïve"],
    ids=["missing", "number", "empty", "too-long", "nul", "newline", "not-ascii"],
)
def test_a_subject_frontdesk_cannot_keep_is_a_sign_in_error(subject: Any) -> None:
    claims = {} if subject is None else {"sub": subject}
    with pytest.raises(LoginFailed):
        identity_from(claims)


def test_a_usable_identity_keeps_its_fields() -> None:
    claims = {"sub": "s" * 255, "email": "ada@example.com", "name": "Ada Lovelace"}
    assert identity_from(claims) == Identity("s" * 255, "ada@example.com", "Ada Lovelace")


def test_an_email_or_name_that_does_not_fit_is_left_out_or_cut() -> None:
    """The customer still signs in: an odd email is dropped, a long name cut."""
    claims: dict[str, Any] = {"sub": "abc", "email": "a\x00@example.com", "name": "N" * 500}
    assert identity_from(claims) == Identity("abc", None, "N" * 200)
    claims = {"sub": "abc", "email": "e" * 321, "name": 7}
    assert identity_from(claims) == Identity("abc", None, None)
