"""The SSRF guard: a backend address that is not public is refused unless the operator allows
its network in FRONTDESK_BACKEND_ALLOWED_NETWORKS (addresses.py)."""

from __future__ import annotations

import asyncio
import ipaddress

import httpx
import pytest
import structlog

from frontdesk.outbound.addresses import (
    MAX_RESOLVED_NAMES,
    AddressPolicy,
    AddressRefused,
    Unresolved,
)
from frontdesk.outbound.policy import OutboundPolicy, Refused, Unreachable
from frontdesk.tools import exchange
from tests.support.resolver import FakeResolver
from tests.tools.backends import (
    ScriptedBackend,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    reply_json,
)
from tests.tools.conftest import Serve

pytestmark = pytest.mark.anyio

# One address inside every range of the IANA IPv4 and IPv6 Special-Purpose Address Registries
# that is not globally reachable (RFC 6890 tables), and every deprecated or wrapping range.
NOT_PUBLIC = [
    pytest.param("0.1.2.3", id="this-network-0/8"),
    pytest.param("0.0.0.0", id="unspecified"),  # noqa: S104 (an address to refuse)
    pytest.param("10.1.2.3", id="private-10/8"),
    pytest.param("100.100.100.200", id="shared-address-space-100.64/10"),
    pytest.param("127.0.0.1", id="loopback"),
    pytest.param("127.8.9.10", id="loopback-127/8"),
    pytest.param("169.254.169.254", id="link-local-metadata-169.254/16"),
    pytest.param("172.16.5.4", id="private-172.16/12"),
    pytest.param("172.31.255.254", id="private-172.16/12-top"),
    pytest.param("192.0.0.8", id="ietf-protocol-192.0.0/24-dummy"),
    pytest.param("192.0.0.9", id="ietf-protocol-192.0.0/24-pcp-anycast"),
    pytest.param("192.0.0.170", id="ietf-protocol-192.0.0/24-nat64-discovery"),
    pytest.param("192.0.2.1", id="test-net-1-192.0.2/24"),
    pytest.param("192.88.99.1", id="6to4-relay-anycast-192.88.99/24"),
    pytest.param("192.168.1.1", id="private-192.168/16"),
    pytest.param("198.18.0.1", id="benchmarking-198.18/15"),
    pytest.param("198.19.255.1", id="benchmarking-198.18/15-top"),
    pytest.param("198.51.100.7", id="test-net-2-198.51.100/24"),
    pytest.param("203.0.113.7", id="test-net-3-203.0.113/24"),
    pytest.param("224.0.0.1", id="multicast"),
    pytest.param("239.255.255.250", id="multicast-ssdp"),
    pytest.param("240.0.0.1", id="reserved-240/4"),
    pytest.param("255.255.255.255", id="broadcast"),
    pytest.param("::", id="unspecified-v6"),
    pytest.param("::1", id="loopback-v6"),
    pytest.param("::10.0.0.1", id="v4-compatible-deprecated"),
    pytest.param("::8.8.8.8", id="v4-compatible-deprecated-public"),
    pytest.param("::ffff:127.0.0.1", id="v4-mapped-loopback"),
    pytest.param("::ffff:169.254.169.254", id="v4-mapped-link-local"),
    pytest.param("::ffff:10.0.0.1", id="v4-mapped-private"),
    pytest.param("64:ff9b::a9fe:a9fe", id="nat64-wrapping-link-local"),
    pytest.param("64:ff9b::7f00:1", id="nat64-wrapping-loopback"),
    pytest.param("64:ff9b::c0a8:101", id="nat64-wrapping-private"),
    pytest.param("64:ff9b:1::808:808", id="nat64-local-use-64:ff9b:1::/48"),
    pytest.param("100::1", id="discard-only-100::/64"),
    pytest.param("100:0:0:1::1", id="dummy-prefix-100:0:0:1::/64"),
    pytest.param("2001::1", id="teredo-2001::/32"),
    pytest.param("2001:1::1", id="ietf-protocol-2001::/23-pcp-anycast"),
    pytest.param("2001:2::1", id="benchmarking-2001:2::/48"),
    pytest.param("2001:3::1", id="ietf-protocol-2001::/23-amt"),
    pytest.param("2001:10::1", id="orchid-2001:10::/28"),
    pytest.param("2001:20::1", id="orchidv2-2001:20::/28"),
    pytest.param("2001:1ff::1", id="ietf-protocol-2001::/23-top"),
    pytest.param("2001:db8::1", id="documentation-2001:db8::/32"),
    pytest.param("2002:a00:1::1", id="6to4-wrapping-private"),
    pytest.param("2002:7f00:1::1", id="6to4-wrapping-loopback"),
    pytest.param("2002:a9fe:a9fe::1", id="6to4-wrapping-link-local"),
    pytest.param("3fff::1", id="documentation-3fff::/20"),
    pytest.param("3fff:fff::1", id="documentation-3fff::/20-top"),
    pytest.param("5f00::1", id="srv6-sids-5f00::/16"),
    pytest.param("fc00::1", id="unique-local-fc00::/7"),
    pytest.param("fd12:3456::1", id="unique-local-v6"),
    pytest.param("fe80::1", id="link-local-v6"),
    pytest.param("febf::1", id="link-local-v6-top"),
    pytest.param("fec0::1", id="site-local-deprecated-fec0::/10"),
    pytest.param("feff::1", id="site-local-deprecated-top"),
    pytest.param("ff02::1", id="multicast-v6"),
    pytest.param("ff0e::1", id="multicast-v6-global-scope"),
    pytest.param("4000::1", id="unallocated-v6"),
]
# Controls: public addresses, including ones that wrap a public IPv4 address.
PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",  # just below the shared address space
    "100.128.0.1",  # just above it
    "172.32.0.1",  # just above 172.16/12
    "192.0.3.1",  # between the 192.0.0/24 and 192.0.2/24 blocks
    "198.20.0.1",  # just above the benchmarking block
    "223.255.255.254",  # just below multicast
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",  # IPv4-mapped: judged on the IPv4 it reaches
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::1",  # 6to4 through the public router 8.8.8.8
    "2001:200::1",  # just above 2001::/23
    "3fff:1000::1",  # just above 3fff::/20
]


# AddressPolicy -----------------------------------------------------------------------------


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_an_address_that_is_not_public_is_refused_by_default(address: str) -> None:
    """Loopback, private, link-local, multicast and special ranges need the operator's leave."""
    assert not AddressPolicy([]).permits(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_address_is_permitted(address: str) -> None:
    """Addresses on the public internet need no configuration."""
    assert AddressPolicy([]).permits(ipaddress.ip_address(address))


def test_an_allowed_network_permits_exactly_its_addresses() -> None:
    """10.0.0.0/8 allowed lets 10.x through, and nothing else that is private."""
    policy = AddressPolicy(["10.0.0.0/8", "fd00::/8"])
    assert policy.permits(ipaddress.ip_address("10.200.0.7"))
    assert policy.permits(ipaddress.ip_address("fd12::7"))
    assert not policy.permits(ipaddress.ip_address("192.168.0.1"))
    assert not policy.permits(ipaddress.ip_address("127.0.0.1"))
    assert not policy.permits(ipaddress.ip_address("169.254.169.254"))


async def test_checking_an_ip_literal_refuses_it_with_the_reason() -> None:
    """check() raises AddressRefused naming the address, and passes an allowed one."""
    with pytest.raises(AddressRefused, match=r"10\.0\.0\.5"):
        await AddressPolicy([]).check("10.0.0.5", 443)
    await AddressPolicy(["10.0.0.0/8"]).check("10.0.0.5", 443)
    await AddressPolicy([]).check("8.8.8.8", 443)


async def test_a_bracketed_ipv6_literal_is_checked_as_an_address() -> None:
    """[::1] is loopback, not a name to resolve."""
    with pytest.raises(AddressRefused):
        await AddressPolicy([]).check("[::1]", 443)
    await AddressPolicy(["::1/128"]).check("[::1]", 443)


async def test_a_name_is_refused_when_it_resolves_to_loopback() -> None:
    """localhost resolves to loopback: refused unless loopback is allowed."""
    with pytest.raises(AddressRefused, match="localhost"):
        await AddressPolicy([]).check("localhost", 80)
    await AddressPolicy(["127.0.0.0/8", "::1/128"]).check("localhost", 80)


async def test_a_name_is_refused_when_any_of_its_addresses_is_not_permitted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One private address among public ones is enough to refuse: the connection could use it."""
    resolver = FakeResolver({"mixed.example": ["8.8.8.8", "10.0.0.1"]})
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    with pytest.raises(AddressRefused, match=r"10\.0\.0\.1"):
        await AddressPolicy([]).check("mixed.example", 443)


async def test_a_name_that_does_not_resolve_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """No address is no permission."""
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", FakeResolver({}))
    with pytest.raises(AddressRefused, match="does not resolve"):
        await AddressPolicy([]).check("nowhere.example", 443)


async def test_a_resolution_is_reused_for_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated checks of a name cost one lookup (RESOLVE_CACHE_SECONDS): the known window in
    which a name rebound to a private address is still believed public."""
    resolver = FakeResolver({"api.example": ["93.184.215.14"]})
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    policy = AddressPolicy([])
    await policy.check("api.example", 443)
    resolver.answers["api.example"] = ["127.0.0.1"]
    await policy.check("api.example", 443)
    assert resolver.lookups == 1
    with pytest.raises(AddressRefused):
        await AddressPolicy([]).check("api.example", 443)


async def test_the_names_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client metadata document's host is anyone's choice, and the same check serves it:
    past MAX_RESOLVED_NAMES the oldest name is looked up again."""
    names = [f"n{number}.example" for number in range(MAX_RESOLVED_NAMES + 1)]
    resolver = FakeResolver({name: ["93.184.215.14"] for name in names})
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    policy = AddressPolicy([])
    for name in names:
        await policy.check(name, 443)
    await policy.check(names[-1], 443)
    assert resolver.lookups == len(names)
    await policy.check(names[0], 443)
    assert resolver.lookups == len(names) + 1


async def test_a_one_shot_call_is_refused_by_the_same_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The identity providers' and client documents' calls (outbound.policy) fail as the
    backends' connections do: AddressRefused, which is the policy's Refused; a name that
    does not resolve is also Unreachable to them."""
    resolver = FakeResolver({"inside.example": ["10.0.0.1"]})
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    policy = OutboundPolicy(
        AddressPolicy([]), allow_http=True, limit_bytes=1024, deadline_seconds=5.0
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(AddressRefused, match=r"10\.0\.0\.1") as refused:
            await policy.call(http, "GET", "http://inside.example/", headers={})
        assert isinstance(refused.value, Refused)
        with pytest.raises(Unresolved, match="does not resolve") as unresolved:
            await policy.call(http, "GET", "http://nowhere.example/", headers={})
        assert isinstance(unresolved.value, Unreachable)


# At call time --------------------------------------------------------------------------------


def reply_ok(backend: ScriptedBackend) -> None:
    backend.routes["/tools"] = reply_json({"text": "reached"})


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_loopback_backend_is_refused_without_the_operators_leave(
    serve: Serve, backend: ScriptedBackend, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    """The call is an unavailable tool, logged as refused, and never leaves Frontdesk."""
    reply_ok(backend)
    # A logger of its own: one cached by an earlier test would bypass capture_logs.
    monkeypatch.setattr(exchange, "log", structlog.get_logger(exchange.__name__))
    served = await serve(
        company("initrode", http_tool("lookup", backend.url("/tools", host))),
        backend_allowed_networks=[],
    )
    with structlog.testing.capture_logs() as logs:
        result = await call_tool(served.client, "initrode", "lookup")
    assert_plain_error(result, "lookup is unavailable right now.", backend)
    refusals = [entry for entry in logs if entry["event"] == "tool_backend_refused"]
    assert len(refusals) == 1
    assert refusals[0]["log_level"] == "error"
    assert refusals[0]["tool"] == "lookup"
    assert "not allowed" in refusals[0]["reason"]
    assert backend.received == []
    assert backend.connections == 0


@pytest.mark.parametrize(
    ("host", "allowed"),
    [("127.0.0.1", ["127.0.0.0/8"]), ("localhost", ["127.0.0.0/8", "::1/128"])],
)
async def test_a_loopback_backend_is_reached_once_loopback_is_allowed(
    serve: Serve, backend: ScriptedBackend, host: str, allowed: list[str]
) -> None:
    """With FRONTDESK_BACKEND_ALLOWED_NETWORKS covering loopback, the call goes through."""
    reply_ok(backend)
    served = await serve(
        company("initrode", http_tool("lookup", backend.url("/tools", host))),
        backend_allowed_networks=allowed,
    )
    result = await call_tool(served.client, "initrode", "lookup")
    assert result == {"content": [{"type": "text", "text": "reached"}], "isError": False}
    assert len(backend.received) == 1


async def test_another_allowed_network_does_not_open_loopback(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Allowing the operator's 10.0.0.0/8 leaves loopback refused."""
    reply_ok(backend)
    served = await serve(
        company("initrode", http_tool("lookup", backend.url("/tools"))),
        backend_allowed_networks=["10.0.0.0/8"],
    )
    result = await call_tool(served.client, "initrode", "lookup")
    assert_plain_error(result, "lookup is unavailable right now.", backend)
    assert backend.connections == 0
