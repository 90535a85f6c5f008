"""What a method handler knows about the request it serves."""

from __future__ import annotations

from dataclasses import dataclass

from frontdesk.companies.catalog import ServedCompany
from frontdesk.domain import Caller
from frontdesk.protocol.bearer import Challenges


@dataclass(slots=True)
class RequestContext:
    company: ServedCompany
    caller: Caller
    request_id: str
    # The challenges a personal tool answers a guest with; None without sign-in.
    sign_in: Challenges | None = None
    # Set by ``initialize``: the endpoint then issues a session for this version.
    negotiated_version: str | None = None
    # Set by a reply that needs a signed-in customer: the whole HTTP response becomes a 401
    # with this WWW-Authenticate, and still carries every reply.
    www_authenticate: str | None = None
