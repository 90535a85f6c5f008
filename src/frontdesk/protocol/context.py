"""What a method handler knows about the request it serves."""

from __future__ import annotations

from dataclasses import dataclass, field

from frontdesk.companies.catalog import ServedCompany
from frontdesk.domain import Caller


@dataclass(slots=True)
class RequestContext:
    company: ServedCompany
    caller: Caller
    request_id: str
    # The challenge a personal tool answers a guest with; None without sign-in.
    sign_in_challenge: str | None = None
    # Set by ``initialize``: the endpoint then issues a session for this version.
    negotiated_version: str | None = None
    # WWW-Authenticate challenges raised by replies that need a signed-in customer;
    # any of them turns the whole HTTP response into a 401 that still carries every reply.
    challenges: list[str] = field(default_factory=list)
