"""Which addresses Frontdesk may call: public ones, unless the operator allows more; and the
one check of a name against that, which every outbound call makes.

A company's backend URL is operator-reviewed configuration, but a URL that resolves to a
private, loopback or link-local address would let a companies file reach the service's
own network (SSRF). Such addresses are refused unless they fall in
``FRONTDESK_BACKEND_ALLOWED_NETWORKS`` (identity providers and client metadata documents
have their own policies: login.connectors, oauth.client_documents). A name is resolved and
checked whenever a new connection is made (a name can change what it points at; the answer
is cached briefly, a bounded number of names), and the connection goes to an address that
was checked (checked_transport for the backends' pool, policy.pinned_stream for one-shot
calls). Every failure of the check is an ``AddressRefused`` (outbound.failures).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Sequence

from frontdesk.outbound.failures import AddressRefused, Unresolved

__all__ = [
    "MAX_RESOLVED_NAMES",
    "AddressPolicy",
    "AddressRefused",
    "IPAddress",
    "IPNetwork",
    "Unresolved",
    "is_public",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
RESOLVE_CACHE_SECONDS = 60.0
# Names whose answer is kept at once, per policy; beyond it the oldest goes.
MAX_RESOLVED_NAMES = 1024


# Ranges of the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 tables) whose
# "Globally Reachable" is False, plus deprecated ranges still worth refusing. Our own table,
# so the answer does not depend on which Python patch release's ``is_global`` runs. Where the
# registry makes a globally reachable exception inside a refused block (192.0.0.9/32,
# 192.0.0.10/32, 2001:1::1-3/128, 2001:3::/32, 2001:4:112::/48, 2001:20::/28, 2001:30::/28)
# we refuse the whole block: no backend lives at an anycast PCP/TURN/AMT/ORCHID address.
NOT_GLOBALLY_REACHABLE: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8",  # "this network" (RFC 791)
        "10.0.0.0/8",  # private (RFC 1918)
        "100.64.0.0/10",  # shared address space, carrier-grade NAT (RFC 6598)
        "127.0.0.0/8",  # loopback (RFC 1122)
        "169.254.0.0/16",  # link-local, where clouds keep metadata services (RFC 3927)
        "172.16.0.0/12",  # private (RFC 1918)
        "192.0.0.0/24",  # IETF protocol assignments (RFC 6890)
        "192.0.2.0/24",  # documentation TEST-NET-1 (RFC 5737)
        "192.88.99.0/24",  # deprecated 6to4 relay anycast (RFC 7526)
        "192.168.0.0/16",  # private (RFC 1918)
        "198.18.0.0/15",  # benchmarking (RFC 2544)
        "198.51.100.0/24",  # documentation TEST-NET-2 (RFC 5737)
        "203.0.113.0/24",  # documentation TEST-NET-3 (RFC 5737)
        "224.0.0.0/4",  # multicast (RFC 5771): never a single backend
        "240.0.0.0/4",  # reserved (RFC 1112)
        "255.255.255.255/32",  # limited broadcast (RFC 919)
        "::/96",  # unspecified, loopback and deprecated IPv4-compatible (RFC 4291 2.5.5.1)
        "::ffff:0:0/96",  # IPv4-mapped (RFC 4291): only reached through its IPv4, see below
        "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation (RFC 8215)
        "100::/64",  # discard-only (RFC 6666)
        "100:0:0:1::/64",  # dummy IPv6 prefix (RFC 9780)
        "2001::/23",  # IETF protocol assignments, Teredo included (RFC 2928, RFC 4380)
        "2001:db8::/32",  # documentation (RFC 3849)
        "3fff::/20",  # documentation (RFC 9637)
        "5f00::/16",  # segment routing SIDs (RFC 9602)
        "fc00::/7",  # unique local (RFC 4193)
        "fe80::/10",  # link-local (RFC 4291)
        "fec0::/10",  # site-local, deprecated but still routed by some stacks (RFC 3879)
        "ff00::/8",  # multicast (RFC 4291)
    )
)
# NAT64 (RFC 6052) reaches the IPv4 address held in its last 32 bits.
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` is globally reachable, judged on the IPv4 it carries if it wraps one.

    An IPv4-mapped (``::ffff:a.b.c.d``), NAT64 (``64:ff9b::a.b.c.d``, RFC 6052) or 6to4
    (``2002:AABB:CCDD::``, RFC 3056) address reaches that IPv4 address, so ``::ffff:10.0.0.1``
    is as private as 10.0.0.1.
    """
    if isinstance(address, ipaddress.IPv6Address):
        wrapped = _wrapped_ipv4(address)
        if wrapped is not None:
            return is_public(wrapped)
    if any(address in network for network in NOT_GLOBALLY_REACHABLE):
        return False
    # Python's own judgement as a second opinion: is_reserved also covers the IPv6 space IANA
    # has not allocated (e.g. 4000::/3), which no backend can be reached at.
    return not (
        not address.is_global
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def _wrapped_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


class AddressPolicy:
    """Which addresses may be called, and the one check of a name against it: for the tool
    backends' connections (checked_transport) and the one-shot calls alike (policy)."""

    def __init__(self, allowed_networks: Sequence[str]) -> None:
        self._allowed: list[IPNetwork] = [
            ipaddress.ip_network(network, strict=False) for network in allowed_networks
        ]
        # Names resolved lately, oldest first. Bounded: a client metadata document's host is
        # anyone's choice (policy), not only the names the companies files hold.
        self._resolved: OrderedDict[str, tuple[float, list[IPAddress]]] = OrderedDict()

    def permits(self, address: IPAddress) -> bool:
        return is_public(address) or any(address in network for network in self._allowed)

    async def check(self, host: str, port: int) -> list[IPAddress]:
        """Every address ``host`` resolves to, each permitted: AddressRefused unless all are
        (a name that also resolves to an internal address is not called at all), Unresolved
        when it resolves to none. The caller connects to one of them, never to the name
        again (checked_transport, policy.pinned_stream)."""
        addresses = await self._resolve(host, port)
        for address in addresses:
            if not self.permits(address):
                raise AddressRefused(
                    f"{host} resolves to {address}, an address Frontdesk does not call"
                    " (its network is not allowed)"
                )
        return addresses

    async def _resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            return [ipaddress.ip_address(host.strip("[]"))]
        except ValueError:
            pass
        cached = self._resolved.get(host)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except (OSError, ValueError) as error:
            # ValueError: the resolver's IDNA codec raises UnicodeError on a name it cannot
            # encode; kept out of a 500.
            raise Unresolved(f"{host} does not resolve ({error})") from None
        addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
        if not addresses:
            raise Unresolved(f"{host} does not resolve")
        self._resolved[host] = (now + RESOLVE_CACHE_SECONDS, addresses)
        self._resolved.move_to_end(host)
        while len(self._resolved) > MAX_RESOLVED_NAMES:
            self._resolved.popitem(last=False)
        return addresses
