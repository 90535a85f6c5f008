"""``signin.refresh_retry_seconds``: a company's own retry window for refresh tokens
(oauth.refresh). Off unless the company chooses it, and never longer than a minute."""

from __future__ import annotations

from typing import Any

import pytest

from frontdesk.companies.definition import SigninSetup
from frontdesk.companies.files import parse_companies
from frontdesk.errors import ConfigurationError


def company_with(signin: dict[str, Any]) -> dict[str, Any]:
    return {
        "companies": [
            {"tenant_key": "acme", "name": "Acme", "signin": {"login": {"type": "dev"}, **signin}}
        ]
    }


def test_a_refresh_token_works_once_unless_the_company_chooses_a_window() -> None:
    """No window by default: the contract's rule (interface 3.2)."""
    parsed = parse_companies(company_with({}))
    signin = parsed.companies[0].signin
    assert signin is not None
    assert signin.refresh_retry_seconds == 0


@pytest.mark.parametrize("seconds", [1, 30, 60])
def test_a_window_of_up_to_a_minute_is_accepted(seconds: int) -> None:
    parsed = parse_companies(company_with({"refresh_retry_seconds": seconds}))
    assert parsed.companies[0].signin == SigninSetup.model_validate(
        {"login": {"type": "dev"}, "refresh_retry_seconds": seconds}
    )


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (61, "less than or equal to 60"),
        (600, "less than or equal to 60"),
        (-1, "greater than or equal to 0"),
        ("a minute", "valid integer"),
    ],
)
def test_a_window_out_of_bounds_is_refused_at_its_path(seconds: object, said: str) -> None:
    """Longer than a minute, negative, or not a number: refused, naming the field."""
    with pytest.raises(ConfigurationError) as caught:
        parse_companies(company_with({"refresh_retry_seconds": seconds}))
    message = str(caught.value)
    assert message.startswith("companies[0].signin.refresh_retry_seconds: "), message
    assert said in message
