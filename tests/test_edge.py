"""The edge every request crosses: the Host check (DNS-rebinding protection) and the
request id."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from tests.support.edge import (
    GENERATED_ID,
    INITIALIZE,
    PUBLIC_BASE_URL,
    call_asgi,
    serving,
)

# Explicit, so that anyio keeps each test's parametrization.
pytestmark = pytest.mark.anyio


# Host (DNS-rebinding protection)


def refused_host(response: httpx.Response) -> bool:
    """Whether this is the Host check's refusal: 400, plain text, and nothing served."""
    return (
        response.status_code == 400
        and response.text == "Invalid host header"
        and "mcp-session-id" not in response.headers
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/acme/mcp"),
        ("GET", "/healthz"),
        ("GET", "/"),
        ("GET", "/.well-known/oauth-protected-resource/v1/acme/mcp"),
        ("GET", "/no/such/path"),
        ("OPTIONS", "/v1/acme/mcp"),
    ],
)
async def test_a_foreign_host_is_refused(client: httpx.AsyncClient, method: str, path: str) -> None:
    """A Host that is not the base URL's gets 400, on the MCP path and everywhere else,
    preflights included."""
    response = await client.request(
        method,
        path,
        json=INITIALIZE,
        headers={
            "Host": "attacker.example",
            "Origin": "https://inspector.example",
            "Access-Control-Request-Method": "POST",
        },
    )
    assert refused_host(response)
    assert not any(name.startswith("access-control-") for name in response.headers)


async def test_the_base_urls_own_host_is_served(client: httpx.AsyncClient) -> None:
    """The MCP endpoint answers when the Host is the base URL's host and port."""
    response = await client.post(
        "/v1/acme/mcp", json=INITIALIZE, headers={"Host": "127.0.0.1:8000"}
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "hosts",
    [
        [b"127.0.0.1:8000", b"attacker.example"],
        [b"attacker.example", b"127.0.0.1:8000"],
        [b"127.0.0.1:8000", b"127.0.0.1:8000"],
    ],
)
async def test_a_request_with_two_hosts_is_refused(
    client: httpx.AsyncClient, hosts: list[bytes]
) -> None:
    """Two Host headers are refused whatever they say (RFC 9112 section 3.2): the check
    and whatever reads the other one could disagree on the name."""
    headers = [(b"host", host) for host in hosts]
    response = await client.post("/v1/acme/mcp", json=INITIALIZE, headers=headers)
    assert refused_host(response)


async def test_a_request_without_a_host_is_refused(app: Frontdesk) -> None:
    """HTTP/1.0 may leave the Host out; without one the request names no served host."""
    answered = await call_asgi(app, "GET", "/healthz", [])
    assert answered.status == 400
    assert answered.body == b"Invalid host header"


@pytest.mark.parametrize(
    "host", ["localhost:8000", "LOCALHOST", "127.0.0.1", "[::1]:8000", "[::1]"]
)
async def test_a_loopback_base_url_accepts_every_loopback_name(
    client: httpx.AsyncClient, host: str
) -> None:
    """On a loopback base URL, localhost, 127.0.0.1 and [::1] are the same server."""
    response = await client.post("/v1/acme/mcp", json=INITIALIZE, headers={"Host": host})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "host",
    ["localhost", "127.0.0.1:8000", "[::1]", "frontdesk.example", "www.eu.frontdesk.example"],
)
async def test_a_public_base_url_refuses_loopback_and_lookalike_hosts(
    make_settings: Callable[..., Settings], host: str
) -> None:
    """Behind a public name, loopback aliases and lookalikes are refused like any other
    foreign host, and never redirected."""
    async with serving(make_settings(base_url=PUBLIC_BASE_URL)) as client:
        assert refused_host(await client.get("/healthz", headers={"Host": host}))
        assert (await client.get("/healthz")).status_code == 200


async def test_allowed_hosts_from_the_environment_are_served_too(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FRONTDESK_ALLOWED_HOSTS adds names to the base URL's host, and only those."""
    monkeypatch.setenv("FRONTDESK_ALLOWED_HOSTS", "api.example.com, Internal.Example")
    async with serving(make_settings(base_url=PUBLIC_BASE_URL)) as client:
        for host in ("eu.frontdesk.example", "api.example.com:443", "internal.example"):
            assert (await client.get("/healthz", headers={"Host": host})).status_code == 200
        assert refused_host(await client.get("/healthz", headers={"Host": "other.example"}))


async def test_an_ipv6_base_url_is_served_under_its_bracketed_host(
    make_settings: Callable[..., Settings],
) -> None:
    """A base URL on an IPv6 literal accepts the bracketed Host clients send."""
    async with serving(make_settings(base_url="https://[2001:db8::1]:8443")) as client:
        response = await client.get("/healthz", headers={"Host": "[2001:db8::1]:8443"})
        other = await client.get("/healthz", headers={"Host": "[2001:db8::2]:8443"})
    assert response.status_code == 200
    assert refused_host(other)


# Request id


async def test_a_request_id_is_generated_when_none_is_sent(client: httpx.AsyncClient) -> None:
    """Each response carries a fresh X-Request-Id when the caller sent none."""
    first = (await client.get("/healthz")).headers["x-request-id"]
    second = (await client.get("/healthz")).headers["x-request-id"]
    assert GENERATED_ID.match(first)
    assert GENERATED_ID.match(second)
    assert first != second


@pytest.mark.parametrize("request_id", ["abc", "req-42.eu:7", "A" * 128])
async def test_a_safe_request_id_is_echoed(client: httpx.AsyncClient, request_id: str) -> None:
    """A short, plain X-Request-Id from a proxy is kept, so logs join up across hops."""
    response = await client.get("/healthz", headers={"X-Request-Id": request_id})
    assert response.headers["x-request-id"] == request_id


@pytest.mark.parametrize(
    "request_id",
    ["has spaces", "x" * 500, "A" * 129, "abc\n", "a;b", "<script>", "id\tx", "ünïcode"],
)
async def test_an_unsafe_request_id_is_replaced(client: httpx.AsyncClient, request_id: str) -> None:
    """An X-Request-Id that is long or has unsafe characters is replaced, never echoed."""
    response = await client.get("/healthz", headers=[(b"X-Request-Id", request_id.encode())])
    assert GENERATED_ID.match(response.headers["x-request-id"])


async def test_refused_requests_still_get_a_request_id(
    make_settings: Callable[..., Settings],
) -> None:
    """Every refusal, the edge's own and the middlewares', carries X-Request-Id, so even
    refusals can be traced."""
    async with serving(make_settings(cors_origins=["https://app.example"])) as client:
        answers = [
            await client.get("/healthz", headers={"Host": "attacker.example"}),
            await client.get("/healthz", headers=[(b"host", b"127.0.0.1"), (b"host", b"x")]),
            await client.get("/healthz", headers={"Origin": "https://evil.example"}),
            await client.options(
                "/v1/acme/mcp",
                headers={"Origin": "https://app.example", "Access-Control-Request-Method": "PUT"},
            ),
            await client.options(
                "/v1/acme/mcp",
                headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
            ),
        ]
        traced = await client.get(
            "/healthz", headers={"Host": "attacker.example", "X-Request-Id": "trace-1"}
        )
    assert [answer.status_code for answer in answers] == [400, 400, 403, 400, 200]
    for answer in answers:
        assert GENERATED_ID.match(answer.headers["x-request-id"])
    assert traced.headers["x-request-id"] == "trace-1"
