"""A company's branding in the companies file (companies.branding): https links only, an
accent colour whose button text always reaches WCAG AA, and a logo origin safe for a CSP."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk.companies.branding import Branding, contrast, text_on
from frontdesk.companies.definition import CompanyDefinition
from frontdesk.oauth.pages import possessive


def company(**branding: Any) -> CompanyDefinition:
    return CompanyDefinition.model_validate(
        {"tenant_key": "roasters", "name": "Demo Coffee Roasters", "branding": branding}
    )


def test_a_full_branding_is_kept_and_its_logo_origin_derived() -> None:
    branding = company(
        logo_url="https://CDN.roasters.example:8443/brand/logo.svg?v=2",
        logo_alt="Demo Coffee Roasters",
        accent_color="#1F6F4A",
        privacy_url="https://roasters.example/privacy",
        terms_url="https://roasters.example/terms",
        support="https://roasters.example/help",
    ).branding
    assert branding is not None
    assert branding.logo_origin == "https://cdn.roasters.example:8443"
    assert branding.accent_color == "#1f6f4a"
    assert branding.accent_text == "#ffffff"
    assert branding.support_href == "https://roasters.example/help"
    assert Branding(support="help@roasters.example").support_href == "mailto:help@roasters.example"


@pytest.mark.parametrize(
    "url",
    [
        "http://roasters.example/logo.png",
        "javascript:alert(1)",
        "data:image/svg+xml,<svg/>",
        "https://roasters.example;script-src 'unsafe-inline'/logo.png",
        "https://user@roasters.example/logo.png",
        "https://roasters.example:99999/logo.png",
        "https://roasters.example/logo .png",
        "https:///logo.png",
    ],
)
def test_a_link_that_is_not_a_plain_https_url_is_refused(url: str) -> None:
    for field in ("logo_url", "privacy_url", "terms_url", "support"):
        with pytest.raises(ValidationError, match=field):
            company(**{field: url})


@pytest.mark.parametrize("colour", ["1f6f4a", "#1f6f4", "#1f6f4aff", "red", "#gg0000"])
def test_an_accent_that_is_not_rrggbb_is_refused(colour: str) -> None:
    with pytest.raises(ValidationError, match="#rrggbb"):
        company(accent_color=colour)


@pytest.mark.parametrize(
    "colour", ["#ffd500", "#777777", "#767676", "#2458d6", "#000000", "#ffffff"]
)
def test_the_button_text_always_reaches_aa_contrast(colour: str) -> None:
    """White where it reaches 4.5:1, else black, which then does (WCAG 2.2 1.4.3)."""
    assert contrast(colour, text_on(colour)) >= 4.5


def test_every_grey_gets_readable_text() -> None:
    for level in range(256):
        colour = f"#{level:02x}{level:02x}{level:02x}"
        assert contrast(colour, text_on(colour)) >= 4.5, colour


@pytest.mark.parametrize("support", ["help@", "mailto:help@roasters.example", "a b@x.example"])
def test_support_is_an_email_address_or_an_https_url(support: str) -> None:
    with pytest.raises(ValidationError, match="support"):
        company(support=support)


def test_an_unknown_branding_field_is_refused() -> None:
    with pytest.raises(ValidationError, match="colour"):
        company(colour="#000000")


@pytest.mark.parametrize(
    ("name", "owner"),
    [
        ("Initech", "Initech's"),
        ("Demo Coffee Roasters", "Demo Coffee Roasters'"),
        ("HOOLI PARTNERS", "HOOLI PARTNERS'"),
        ("Acme ", "Acme's"),
    ],
)
def test_possessives(name: str, owner: str) -> None:
    assert possessive(name) == owner
