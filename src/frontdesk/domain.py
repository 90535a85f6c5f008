"""Who is asking: the plain typed objects the protocol layers pass down to providers."""

from __future__ import annotations

from typing import NamedTuple


class Customer(NamedTuple):
    """A company's customer, signed in through the company's own login (a tuple, like
    ``Caller``: one is built per signed-in call)."""

    subject: str
    email: str | None
    name: str | None
    scopes: frozenset[str]
    # Whether the company's identity provider vouched for ``email`` (OpenID Connect's
    # email_verified: true); False for any other answer or none, and when there is no email.
    email_verified: bool = False


class Caller(NamedTuple):
    """The party behind one MCP request: a guest when ``customer`` is None.

    A tuple rather than a frozen dataclass: one is built for every request, and a tuple is
    cheaper to build (docs/decisions/hot-path-records.md).
    """

    address: str
    customer: Customer | None = None
    client_id: str | None = None
    # The personal tools that changed since the customer allowed this client, and ask
    # again before they answer it (oauth.tool_consent).
    asked_again: frozenset[str] = frozenset()

    @property
    def is_guest(self) -> bool:
        return self.customer is None

    @property
    def rate_limit_key(self) -> str:
        # A signed-in customer is limited per customer and client, wherever they connect
        # from; a guest has only their address to go by.
        if self.customer is not None:
            return f"customer:{self.client_id}:{self.customer.subject}"
        return f"address:{self.address}"
