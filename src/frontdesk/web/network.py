"""Who is on the other end of a connection, believing X-Forwarded-For only from our proxies."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from frontdesk.web.asgi import Scope


class ClientAddressResolver:
    def __init__(self, trusted_proxies: Sequence[str]) -> None:
        self._trusted = [ipaddress.ip_network(item, strict=False) for item in trusted_proxies]

    def resolve(self, scope: Scope) -> str:
        client = scope.get("client")
        peer = client[0] if client else "unknown"
        if not self._trusted or not self._is_trusted(peer):
            return peer
        # A proxy may add its own header line rather than append to the client's, so
        # every line counts, in order; reading only the first would read the client's.
        forwarded = b",".join(
            value for name, value in scope["headers"] if name == b"x-forwarded-for"
        )
        if not forwarded:
            return peer
        # Walk from the nearest hop back; the first address we do not trust is the client.
        hops = [hop.strip() for hop in forwarded.decode("latin-1").split(",") if hop.strip()]
        for hop in reversed(hops):
            if not self._is_trusted(hop):
                return hop if _is_address(hop) else peer
        return hops[0] if hops and _is_address(hops[0]) else peer

    def _is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._trusted)


def _is_address(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
