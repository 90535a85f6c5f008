"""What a method handler knows about the request it serves, and what an MCP revision is
to the endpoint: a few operations over one method core.

The methods' logic (tools, resources, prompts, completion: ``core``) is the same in every
revision. A revision says only what differs: how a request of it is admitted (its headers
and each message's envelope), which methods it answers (its table, built once at import, so
that finding a method is one dict lookup), the fields its results carry, and the HTTP status
of a request answered with one error. One module of ``protocol/revisions`` a revision; the
endpoint asks the revision and never tests which one it has. Both live here, below the core
and the revisions, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from frontdesk.companies.catalog import ServedCompany
from frontdesk.domain import Caller
from frontdesk.protocol.bearer import Challenges
from frontdesk.protocol.jsonrpc import Body, Message, Result
from frontdesk.protocol.request_state import RequestStates
from frontdesk.usage.counters import UsageCounters


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


# A method's logic: what it answers the message's params with, for this request.
Handler = Callable[[RequestContext, dict[str, Any]], Awaitable[Result]]


class Revision(Protocol):
    # The MCP-Protocol-Version values that choose this revision.
    versions: tuple[str, ...]
    # Its methods by name; a name it lacks is "method not found".
    methods: Mapping[str, Handler]

    def admit_request(
        self,
        raw_headers: Sequence[tuple[bytes, bytes]],
        headers: dict[bytes, bytes],
        body: Body,
        company: ServedCompany,
        fresh_for: Callable[[str], float],
    ) -> RoutedRequest | None:
        """Refuse a request the revision cannot take as a whole; what its routing headers
        said, for a revision that routes on them."""
        ...

    def admit(self, context: RequestContext, message: Message) -> Handler | None:
        """Refuse one message whose envelope or headers are not as the revision requires;
        the handler of its method from ``methods``, None for a method the revision lacks."""
        ...

    def client_capabilities(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """What the message's client declared it can be asked; None when the revision has
        no way to ask a client anything in the middle of a request."""
        ...

    def shape(self, context: RequestContext, message: Message, result: Result) -> Result:
        """The core's result with the fields this revision adds to every result."""
        ...

    def status(self, reply: dict[str, Any]) -> int:
        """The HTTP status of a request answered with this one reply."""
        ...
