"""The protocol every login connector speaks, and what it hands back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Identity:
    """A customer as the company's login vouches for them."""

    subject: str
    email: str | None
    name: str | None
    # True only when the login vouches for the address itself (OpenID Connect's
    # email_verified); an address anyone could have typed or set is False.
    email_verified: bool = False


@dataclass(frozen=True, slots=True)
class LoginAttempt:
    """One sign-in in progress, as a connector sees it.

    ``state`` travels through the browser and comes back; ``secret`` never leaves the
    server (it is derived from the signed flow), so PKCE verifiers and nonces made from
    it cannot be read off the customer's address bar.
    """

    state: str
    secret: bytes
    callback_url: str


class LoginFailed(Exception):
    """The company's login did not vouch for the customer; the message is safe to show."""


class ProviderUnavailable(LoginFailed):
    """The company's login could not be reached or answered nonsense (try again later)."""


class LoginConnector(Protocol):
    async def begin(self, attempt: LoginAttempt) -> str:
        """The URL to send the customer's browser to."""
        ...

    async def complete(self, attempt: LoginAttempt, params: Mapping[str, str]) -> Identity:
        """Turn what came back (a callback query or a form) into a verified identity."""
        ...
