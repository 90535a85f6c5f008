"""What a method handler knows about the request it serves."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from frontdesk.companies.catalog import ServedCompany
from frontdesk.domain import Caller
from frontdesk.protocol.bearer import Challenges
from frontdesk.protocol.request_state import RequestStates
from frontdesk.usage.counters import UsageCounters

if TYPE_CHECKING:
    from frontdesk.protocol.revision import Revision


@dataclass(slots=True)
class RoutedRequest:
    """What the headers of a request of a revision that routes on them say (2026-07-28:
    ``revisions/r2026_07_28.py`` checks each message against them), read as each check
    needs it: most messages need little."""

    # Mcp-Method and Mcp-Name as sent (OWS and base64 are undone when compared).
    method: bytes | None
    name: bytes | None
    # Every header as sent: a tool that declares Mcp-Param-* headers reads its own.
    raw_headers: Sequence[tuple[bytes, bytes]]
    # Seconds this instance keeps serving a company's listings as they are, by tenant key.
    fresh_for: Callable[[str], float]


@dataclass(slots=True)
class RequestContext:
    company: ServedCompany
    caller: Caller
    request_id: str
    # Seals and opens the requestState of a tool that asks the customer (2026-07-28).
    request_states: RequestStates
    # Where each tools/call is counted for the company's usage (frontdesk.usage).
    usage: UsageCounters
    # The revision the request is of: what the methods ask where revisions differ.
    revision: Revision
    # What the routing headers said, when the request's revision routes on them.
    routed: RoutedRequest | None = None
    # The challenges a personal tool answers a guest with; None without sign-in.
    sign_in: Challenges | None = None
    # Set by ``initialize``: the endpoint then issues a session for this version.
    negotiated_version: str | None = None
    # Set by a reply that needs a signed-in customer: the whole HTTP response becomes a 401
    # with this WWW-Authenticate, and still carries every reply.
    www_authenticate: str | None = None
