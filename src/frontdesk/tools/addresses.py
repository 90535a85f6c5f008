"""Which backend addresses Frontdesk may call: public ones, unless the operator allows more.

A company's backend URL is operator-reviewed configuration, but a URL that resolves to a
private, loopback or link-local address would let a companies file reach the service's
own network (SSRF). Such addresses are refused unless they fall in
``FRONTDESK_BACKEND_ALLOWED_NETWORKS``. Resolution is checked at call time (a name can
change what it points at) and cached briefly.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Sequence

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
RESOLVE_CACHE_SECONDS = 60.0


class AddressRefused(Exception):
    """The backend's address is in a range the operator has not allowed."""


def is_public(address: IPAddress) -> bool:
    # is_global also excludes the shared address space 100.64.0.0/10 (RFC 6598), which
    # is_private does not cover and where some clouds keep their metadata service.
    return not (
        not address.is_global
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


class AddressPolicy:
    def __init__(self, allowed_networks: Sequence[str]) -> None:
        self._allowed: list[IPNetwork] = [
            ipaddress.ip_network(network, strict=False) for network in allowed_networks
        ]
        self._resolved: dict[str, tuple[float, list[IPAddress]]] = {}

    def permits(self, address: IPAddress) -> bool:
        return is_public(address) or any(address in network for network in self._allowed)

    async def check(self, host: str, port: int) -> None:
        """Raise AddressRefused unless every address ``host`` resolves to is permitted."""
        for address in await self._resolve(host, port):
            if not self.permits(address):
                raise AddressRefused(f"{host} resolves to {address}, which is not allowed")

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
        except OSError as error:
            raise AddressRefused(f"{host} does not resolve: {error}") from None
        addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
        self._resolved[host] = (now + RESOLVE_CACHE_SECONDS, addresses)
        return addresses
