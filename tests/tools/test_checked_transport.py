"""The tool-backend client connects to the address it checked, never to the name again
(checked_transport): a name rebound to an internal address after its check cannot carry a
call there, while TLS still checks the certificate against the name and connections are
still kept alive per name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from frontdesk.outbound.addresses import AddressPolicy, AddressRefused
from frontdesk.outbound.clients import OutboundClients
from tests.support.https_documents import run_https_documents
from tests.support.resolver import FakeResolver
from tests.tools.backends import ScriptedBackend, reply_json

pytestmark = pytest.mark.anyio

# A name no real resolver knows: only the test's resolver answers it.
NAME = "backend.frontdesk-test.invalid"


def resolve(monkeypatch: pytest.MonkeyPatch, resolver: FakeResolver) -> None:
    """Every lookup on this test's event loop, httpcore's included, asks ``resolver``."""
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)


async def test_a_rebound_name_is_called_at_the_checked_address(
    monkeypatch: pytest.MonkeyPatch, backend: ScriptedBackend
) -> None:
    """Checked at 127.0.0.1 (permitted), then rebound to 10.0.0.1: the call still reaches
    the checked address, and the name is resolved only once."""
    backend.routes["/tool"] = reply_json({"text": "ok"})
    resolver = FakeResolver({NAME: ["127.0.0.1"]}, then={NAME: ["10.0.0.1"]})
    resolve(monkeypatch, resolver)
    outbound = OutboundClients(backend_addresses=AddressPolicy(["127.0.0.1/32"]))
    try:
        reply = await outbound.for_backends().post(backend.url("/tool", NAME), content=b"{}")
    finally:
        await outbound.aclose()
    assert reply.status_code == 200
    assert resolver.lookups == 1
    assert backend.received[0].headers["host"] == f"{NAME}:{backend.port}"


async def test_a_name_resolving_to_a_refused_address_is_never_connected(
    monkeypatch: pytest.MonkeyPatch, backend: ScriptedBackend
) -> None:
    resolve(monkeypatch, FakeResolver({NAME: ["127.0.0.1"]}))
    outbound = OutboundClients(backend_addresses=AddressPolicy([]))
    try:
        with pytest.raises(AddressRefused, match=r"127\.0\.0\.1"):
            await outbound.for_backends().post(backend.url("/tool", NAME), content=b"{}")
    finally:
        await outbound.aclose()
    assert backend.connections == 0


async def test_connections_are_kept_alive_across_calls(
    monkeypatch: pytest.MonkeyPatch, backend: ScriptedBackend
) -> None:
    backend.routes["/tool"] = reply_json({"text": "ok"})
    resolve(monkeypatch, FakeResolver({NAME: ["127.0.0.1"]}))
    outbound = OutboundClients(backend_addresses=AddressPolicy(["127.0.0.0/8"]))
    try:
        for _ in range(3):
            reply = await outbound.for_backends().post(backend.url("/tool", NAME), content=b"{}")
            assert reply.status_code == 200
    finally:
        await outbound.aclose()
    assert backend.connections == 1


async def test_tls_is_checked_against_the_name_not_the_address(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The connection goes to 127.0.0.1, the certificate must still be valid for the name."""
    other = "other.frontdesk-test.invalid"
    answers = {NAME: ["127.0.0.1"], other: ["127.0.0.1"]}
    resolve(monkeypatch, FakeResolver(answers))
    with run_https_documents(tmp_path, names=(NAME,)) as server:
        server.serve_json("/tool", {"text": "ok"})
        port = server.base_url.rpartition(":")[2]
        outbound = OutboundClients(
            tls=server.ssl_context(), backend_addresses=AddressPolicy(["127.0.0.0/8"])
        )
        try:
            reply = await outbound.for_backends().get(f"https://{NAME}:{port}/tool")
            assert reply.json() == {"text": "ok"}
            with pytest.raises(httpx.ConnectError):
                await outbound.for_backends().get(f"https://{other}:{port}/tool")
        finally:
            await outbound.aclose()
