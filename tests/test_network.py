"""The client's address: X-Forwarded-For is believed only as far as our own proxies."""

from __future__ import annotations

import pytest

from frontdesk.web.asgi import Scope
from frontdesk.web.network import ClientAddressResolver

PROXY = "10.0.0.2"
CLIENT = "203.0.113.9"


def scope(peer: str | None, *forwarded: str) -> Scope:
    return {
        "type": "http",
        "client": None if peer is None else (peer, 40000),
        "headers": [(b"x-forwarded-for", value.encode()) for value in forwarded],
    }


behind_proxies = ClientAddressResolver(["10.0.0.0/8", "192.0.2.1", "2001:db8::/32"])


def test_without_trusted_proxies_the_header_is_ignored() -> None:
    """With no proxies configured, X-Forwarded-For is the caller's word and is ignored."""
    assert ClientAddressResolver([]).resolve(scope(PROXY, CLIENT)) == PROXY


def test_a_header_from_an_untrusted_peer_is_ignored() -> None:
    """A caller that is not one of our proxies cannot choose its own address."""
    assert behind_proxies.resolve(scope("198.51.100.4", "1.2.3.4")) == "198.51.100.4"


def test_a_trusted_peer_without_the_header_is_the_client() -> None:
    """A request from a proxy that names no one else comes from the proxy."""
    assert behind_proxies.resolve(scope(PROXY)) == PROXY


@pytest.mark.parametrize(
    "forwarded",
    [
        CLIENT,
        f"{CLIENT}, 10.0.0.7",
        f"6.6.6.6, {CLIENT}, 10.0.0.7",
        f"spoofed, 6.6.6.6 ,{CLIENT},192.0.2.1, 10.1.2.3",
    ],
)
def test_the_right_most_untrusted_hop_is_the_client(forwarded: str) -> None:
    """Hops are read from the nearest back; what the client wrote before that is ignored."""
    assert behind_proxies.resolve(scope(PROXY, forwarded)) == CLIENT


def test_every_header_line_is_read_in_order() -> None:
    """A proxy that adds its own X-Forwarded-For line is believed over the client's line."""
    assert behind_proxies.resolve(scope(PROXY, "6.6.6.6", f"{CLIENT}, 10.0.0.7")) == CLIENT


def test_when_every_hop_is_trusted_the_farthest_is_the_client() -> None:
    """A request from inside our network is attributed to its farthest hop."""
    assert behind_proxies.resolve(scope(PROXY, "10.9.9.9, 10.0.0.7")) == "10.9.9.9"


@pytest.mark.parametrize(
    "forwarded",
    ["", " , ,", "garbage", f"{CLIENT}, garbage", f"{CLIENT}:443", "unknown", "999.1.1.1", "_"],
)
def test_a_garbage_header_falls_back_to_the_peer(forwarded: str) -> None:
    """A hop that is not an address makes the peer the client, never the garbage."""
    assert behind_proxies.resolve(scope(PROXY, forwarded)) == PROXY


def test_ipv6_peers_and_hops_are_understood() -> None:
    """IPv6 proxies and clients are matched like IPv4 ones."""
    resolved = behind_proxies.resolve(scope("2001:db8::5", "2a00:1450::1, 2001:db8::7"))
    assert resolved == "2a00:1450::1"


def test_a_single_address_is_a_trusted_proxy_too() -> None:
    """A proxy given without a prefix length is trusted as a /32."""
    assert behind_proxies.resolve(scope("192.0.2.1", CLIENT)) == CLIENT
    assert behind_proxies.resolve(scope("192.0.2.2", CLIENT)) == "192.0.2.2"


def test_a_scope_without_a_peer_is_unknown() -> None:
    """A server that gives no peer address yields "unknown", never a forwarded value."""
    assert behind_proxies.resolve(scope(None, CLIENT)) == "unknown"
