"""How many request bodies each client address has under way in this worker, capped.

A body under way holds a connection of the worker's bounded few
(``FRONTDESK_MAX_CONNECTIONS_PER_WORKER``) until its last byte or its deadline: a client
that sends each body a byte at a time, on connection after connection, would hold them all
and leave every other client waiting in the listen queue. A client's own body, sent at once,
is under way for microseconds, so even an address that many customers share (an office, a
carrier's NAT, an MCP platform) has a few at a time; the cap bounds the slow ones.

A body is counted from the application's first read of it until its last byte, its
deadline or the client's going away: not while the request waits on the service (a database
lookup before the body is read), which is no doing of the client's.

An IPv6 client is counted by its /64: one subscriber's network is usually a /64 at least
(RFC 6177 section 3), all of it its own to pick addresses from.
"""

from __future__ import annotations

import ipaddress

IPV6_SUBSCRIBER_PREFIX = 64


def address_key(address: str) -> str:
    """What counts as one client: an IPv4 address, or an IPv6 address's /64."""
    if ":" not in address:
        return address
    try:
        ip = ipaddress.IPv6Address(address)
    except ValueError:
        return address  # not an address (an ASGI server without one): counted as given
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)  # an IPv4 client on a dual-stack socket
    network = ipaddress.IPv6Network((ip, IPV6_SUBSCRIBER_PREFIX), strict=False)
    return str(network)


class BodiesPerAddress:
    """Bodies under way per client address, at most ``limit`` for each."""

    __slots__ = ("_counts", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._counts: dict[str, int] = {}

    def take(self, key: str) -> bool:
        """Count one more body for ``key`` (an ``address_key``); False, counting nothing,
        when it has ``limit`` under way already."""
        held = self._counts.get(key, 0)
        if held >= self.limit:
            return False
        self._counts[key] = held + 1
        return True

    def give_back(self, key: str) -> None:
        held = self._counts[key] - 1
        if held:
            self._counts[key] = held
        else:
            # Gone with its last body, so the table holds only addresses sending one now.
            del self._counts[key]

    def under_way(self, key: str) -> int:
        return self._counts.get(key, 0)
