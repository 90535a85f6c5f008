"""What an MCP revision is to the endpoint: a few operations over one method core.

The methods' logic (tools, resources, prompts, completion: ``core``) is the same in every
revision. A revision says only what differs: how a request of it is admitted (its headers
and each message's envelope), which methods it answers (its table, built once at import, so
that finding a method is one dict lookup), the fields its results carry, and the HTTP status
of a request answered with one error. One module of ``protocol/revisions`` a revision; the
endpoint asks the revision and never tests which one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from frontdesk.companies.catalog import ServedCompany
    from frontdesk.protocol.context import RequestContext, RoutedRequest
    from frontdesk.protocol.core import Handler
    from frontdesk.protocol.jsonrpc import Body, Message, Result


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
