"""A company's look on the pages its customers see: the consent page, the development
login and the error pages of a sign-in (oauth.pages).

Everything here is shown to a customer on this service's own origin, so each field is
checked at ``companies apply`` rather than trusted:

- links (logo, privacy, terms, support) are https URLs with a plain DNS host and no
  credentials, so none can run script (``javascript:``), post mixed content, or put
  anything into the Content-Security-Policy that allows the logo's origin (``logo_origin``);
- the accent colour is ``#rrggbb``, and the button text on it is whichever of white or
  black reaches the WCAG 2.2 contrast minimum (1.4.3, 4.5:1). One of the two always does:
  the two ratios are equal at a luminance of about 0.18, where each is about 4.58:1, and
  one only grows as the colour moves away from it. So no colour is refused, and no
  company can make the Allow button unreadable.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

ACCENT_PATTERN = re.compile(r"#[0-9a-fA-F]{6}\Z")
# A host name (or IPv4 address) and an optional port: nothing that could end a CSP source
# expression (``;``, whitespace, quotes) or name another host (``@``).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_PORT = re.compile(rf"{_LABEL}(?:\.{_LABEL})*(?::[0-9]{{1,5}})?\Z")
_EMAIL = re.compile(rf"""[^@\s<>"'(),:;\[\]\\]{{1,64}}@{_LABEL}(?:\.{_LABEL})+\Z""")
MAX_URL = 2048
# WCAG 2.2 1.4.3 (AA): text against its background.
MIN_TEXT_CONTRAST = 4.5
WHITE = "#ffffff"
BLACK = "#000000"


def https_url(value: str) -> str:
    """``value`` when it is an https URL a page may link to, else ValueError."""
    if len(value) > MAX_URL:
        raise ValueError(f"must be at most {MAX_URL} characters")
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise ValueError("must not contain whitespace or control characters")
    parts = urlsplit(value)
    if parts.scheme != "https" or not _HOST_PORT.match(parts.netloc):
        raise ValueError("must be an https URL, e.g. https://www.example.com/privacy")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port past 65535
    except ValueError:
        raise ValueError("must be an https URL with a valid port") from None
    return value


def origin_of(url: str) -> str:
    """The scheme, host and port of an https URL that passed ``https_url``."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.lower()}"


def _channel(value: int) -> float:
    # WCAG 2.2 "relative luminance": sRGB linearised.
    scaled = value / 255
    return scaled / 12.92 if scaled <= 0.04045 else ((scaled + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    red, green, blue = (int(colour[index : index + 2], 16) for index in (1, 3, 5))
    return 0.2126 * _channel(red) + 0.7152 * _channel(green) + 0.0722 * _channel(blue)


def contrast(first: str, second: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours, 1 to 21."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_on(background: str) -> str:
    """White when it reaches 4.5:1 on ``background``, else black (which then does)."""
    return WHITE if contrast(background, WHITE) >= MIN_TEXT_CONTRAST else BLACK


class Branding(BaseModel):
    """``branding`` in a companies file: every field optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Shown at the top of each page, at most 12rem by 3rem (the page's CSS scales it).
    logo_url: str | None = None
    # What a screen reader says for the logo; the company's name when absent.
    logo_alt: str | None = Field(default=None, min_length=1, max_length=200)
    # The Allow and Sign in buttons' colour, e.g. "#1f6f4a".
    accent_color: str | None = None
    privacy_url: str | None = None
    terms_url: str | None = None
    # Where a customer asks for help: an email address or an https URL.
    support: str | None = Field(default=None, max_length=MAX_URL)

    @field_validator("logo_url", "privacy_url", "terms_url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        return None if value is None else https_url(value)

    @field_validator("accent_color")
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not ACCENT_PATTERN.match(value):
            raise ValueError('must be a colour written #rrggbb, e.g. "#1f6f4a"')
        return value.lower()

    @field_validator("support")
    @classmethod
    def _support(cls, value: str | None) -> str | None:
        if value is None or value.startswith("https://"):
            return None if value is None else https_url(value)
        if not _EMAIL.match(value):
            raise ValueError("must be an email address or an https URL")
        return value

    @property
    def logo_origin(self) -> str | None:
        """What the pages' Content-Security-Policy allows images from (and nothing else)."""
        return None if self.logo_url is None else origin_of(self.logo_url)

    @property
    def accent_text(self) -> str | None:
        return None if self.accent_color is None else text_on(self.accent_color)

    @property
    def support_href(self) -> str | None:
        if self.support is None:
            return None
        return self.support if self.support.startswith("https://") else f"mailto:{self.support}"
