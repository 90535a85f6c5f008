"""How an outbound call fails, for every caller (outbound.policy, outbound.checked_transport
and whoever catches their failures). Each message is for the log: it names a host, an
address or a size, never a header or a body (so never a secret, code or token).
"""

from __future__ import annotations


class OutboundFailure(Exception):
    """The call gave no usable answer; the message, for the log, says why."""


class Refused(OutboundFailure):
    """The policy does not make this call: a scheme, an address, or a redirect."""


class Unreachable(OutboundFailure):
    """No answer came from a permitted address (no such name, no connection, TLS, a cut)."""


class AddressRefused(Refused):
    """The one error of the address check (outbound.addresses.AddressPolicy.check): the name
    resolves to an address the policy does not call, or (``Unresolved``) to none."""


class Unresolved(AddressRefused, Unreachable):
    """The name does not resolve: refused like any address not checked, and unreachable to a
    caller that tells the two apart (a client metadata document's host may come back)."""


class TimedOut(OutboundFailure):
    """The whole call did not end within its deadline."""


class Oversized(OutboundFailure):
    """The body, sent or decoded, is longer than the cap. ``inflated`` when only its decoded
    form is."""

    def __init__(self, limit_bytes: int, *, inflated: bool = False) -> None:
        what = "inflates to" if inflated else "is"
        super().__init__(f"the answer {what} more than {limit_bytes} bytes")
        self.limit_bytes = limit_bytes
        self.inflated = inflated


class Unreadable(OutboundFailure):
    """The body cannot be decoded: a coding not asked for, a corrupt or cut gzip stream."""
