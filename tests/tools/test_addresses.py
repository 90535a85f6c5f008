"""The SSRF guard: a backend address that is not public is refused unless the operator allows
its network in FRONTDESK_BACKEND_ALLOWED_NETWORKS (tools/addresses.py)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

import pytest
import structlog

from frontdesk.tools import http as http_provider
from frontdesk.tools.addresses import AddressPolicy, AddressRefused
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

NOT_PUBLIC = [
    pytest.param("127.0.0.1", id="loopback"),
    pytest.param("127.8.9.10", id="loopback-range"),
    pytest.param("::1", id="loopback-v6"),
    pytest.param("10.1.2.3", id="private-10"),
    pytest.param("172.16.5.4", id="private-172"),
    pytest.param("192.168.1.1", id="private-192"),
    pytest.param("fd12:3456::1", id="unique-local-v6"),
    pytest.param("169.254.169.254", id="link-local-metadata"),
    pytest.param("fe80::1", id="link-local-v6"),
    pytest.param("224.0.0.1", id="multicast"),
    pytest.param("239.255.255.250", id="multicast-ssdp"),
    pytest.param("ff02::1", id="multicast-v6"),
    pytest.param("0.0.0.0", id="unspecified"),  # noqa: S104 (an address to refuse)
    pytest.param("::", id="unspecified-v6"),
    pytest.param("100.100.100.200", id="shared-address-space"),
    pytest.param("240.0.0.1", id="reserved"),
    pytest.param("255.255.255.255", id="broadcast"),
    pytest.param("::ffff:127.0.0.1", id="v4-mapped-loopback"),
    pytest.param("::ffff:169.254.169.254", id="v4-mapped-link-local"),
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111"]


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


class FakeResolver:
    """Stands in for the event loop's getaddrinfo: answers from a table, counting lookups."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.lookups = 0

    async def __call__(self, host: str, port: int, **_options: Any) -> list[Any]:
        self.lookups += 1
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        family = socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (a, port)) for a in self.answers[host]]


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
    monkeypatch.setattr(http_provider, "log", structlog.get_logger(http_provider.__name__))
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
