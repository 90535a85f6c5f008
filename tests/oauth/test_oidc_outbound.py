"""The calls to a company's identity provider go through the outbound policy
(outbound_policy, login.oidc): against a real HTTP server on loopback, an address the
operator has not opened is never called, an oversize or dripped answer is cut, a redirect is
not followed and a failed discovery is not fetched again at once."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from joserfc.jwk import ECKey
from structlog.typing import EventDict

from frontdesk.app import Frontdesk
from frontdesk.login import oidc
from frontdesk.login.connector import LoginAttempt, LoginFailed, ProviderUnavailable
from frontdesk.login.oidc import OidcLogin, OidcSettings, pkce_verifier
from frontdesk.outbound.addresses import AddressPolicy
from frontdesk.outbound.clients import LOGIN_MAX_ANSWER_BYTES, OutboundClients
from frontdesk.outbound.policy import OutboundPolicy
from tests.oauth import flows
from tests.support.logs import captured_logs
from tests.support.plain_http import Handler, Server, answer, endless, gzip_bomb

pytestmark = pytest.mark.anyio

SECRET = "relying-party-secret-0123456789-abcdef"
CODE = "the-code-the-provider-issued-0123"
ATTEMPT = LoginAttempt(
    state="state-0123", secret=b"s" * 32, callback_url="https://frontdesk.example/callback"
)
# Only the first loopback address is opened; the servers on 127.0.0.2 stand for the
# internal addresses a provider's discovery document might name.
OPEN = ["127.0.0.1/32"]
KEYS = {"keys": [ECKey.generate_key("P-256").as_dict(private=False)]}


@pytest.fixture
async def servers() -> AsyncIterator[tuple[Server, Server]]:
    """The provider's own server on 127.0.0.1 and an "internal" one on 127.0.0.2."""
    provider, internal = Server("127.0.0.1"), Server("127.0.0.2")
    running = []
    for server in (provider, internal):
        listening = await asyncio.start_server(server.serve, server.host, 0)
        server.port = listening.sockets[0].getsockname()[1]
        running.append(listening)
    yield provider, internal
    for listening in running:
        listening.close()


@pytest.fixture
async def outbound() -> AsyncIterator[OutboundClients]:
    clients = OutboundClients()
    yield clients
    await clients.aclose()


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EventDict]]:
    with captured_logs(monkeypatch, oidc) as logs:
        yield logs


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def login(
    outbound: OutboundClients,
    issuer: str,
    *,
    deadline: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
) -> OidcLogin:
    policy = OutboundPolicy(
        AddressPolicy(OPEN),
        allow_http=True,
        limit_bytes=LOGIN_MAX_ANSWER_BYTES,
        deadline_seconds=deadline,
    )
    settings = OidcSettings(issuer, "frontdesk", SECRET, ("openid",))
    return OidcLogin(settings, outbound.for_logins(), policy, clock)


def discovery(issuer: str, *, keys: str | None = None, token: str | None = None) -> Handler:
    return answer(
        200,
        {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": token or f"{issuer}/token",
            "jwks_uri": keys or f"{issuer}/jwks",
        },
    )


WELL_KNOWN = "/.well-known/openid-configuration"


def reasons(logs: list[EventDict]) -> list[str]:
    return [entry["reason"] for entry in logs if entry["event"] == "login_provider_unavailable"]


async def test_a_discovery_at_an_address_not_opened_is_not_called(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """The issuer itself resolves to an address the operator has not opened."""
    _, internal = servers
    internal.routes[WELL_KNOWN] = discovery(internal.url)
    with pytest.raises(ProviderUnavailable):
        await login(outbound, internal.url).begin(ATTEMPT)
    assert internal.received == []
    assert "127.0.0.2, an address Frontdesk does not call" in reasons(logged)[0]


async def test_keys_named_at_an_address_not_opened_are_not_fetched(
    servers: tuple[Server, Server], outbound: OutboundClients
) -> None:
    provider, internal = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url, keys=f"{internal.url}/jwks")
    internal.routes["/jwks"] = answer(200, KEYS)
    with pytest.raises(ProviderUnavailable):
        await login(outbound, provider.url).begin(ATTEMPT)
    assert provider.paths() == [WELL_KNOWN]
    assert internal.received == []


async def test_a_token_endpoint_at_an_address_not_opened_never_gets_the_secret(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """The code exchange is refused before any byte leaves: neither the client secret, nor
    the code, nor the PKCE verifier reach the internal address, or the log."""
    provider, internal = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url, token=f"{internal.url}/token")
    provider.routes["/jwks"] = answer(200, KEYS)
    internal.routes["/token"] = answer(200, {"id_token": "x"})
    connector = login(outbound, provider.url)
    await connector.begin(ATTEMPT)
    with pytest.raises(ProviderUnavailable):
        await connector.complete(ATTEMPT, {"code": CODE})
    assert internal.received == []
    assert provider.paths() == [WELL_KNOWN, "/jwks"]
    assert "127.0.0.2" in reasons(logged)[0]
    for secret in (SECRET, CODE, pkce_verifier(ATTEMPT)):
        assert secret not in repr(logged)
        assert all(secret.encode() not in request.raw for request in provider.received)


async def test_the_token_endpoint_at_the_providers_address_is_called(
    servers: tuple[Server, Server], outbound: OutboundClients
) -> None:
    """The control: with the endpoint on the open address, the exchange is made (and the
    provider's refusal is a sign-in refusal, not an outage)."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url)
    provider.routes["/jwks"] = answer(200, KEYS)
    provider.routes["/token"] = answer(400, {"error": "invalid_grant"})
    connector = login(outbound, provider.url)
    await connector.begin(ATTEMPT)
    with pytest.raises(LoginFailed) as refused:
        await connector.complete(ATTEMPT, {"code": CODE})
    assert not isinstance(refused.value, ProviderUnavailable)
    token_request = provider.received[-1]
    assert token_request.path == "/token"
    assert pkce_verifier(ATTEMPT).encode() in token_request.raw


async def test_a_secret_a_basic_header_cannot_carry_is_a_clean_sign_in_error(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """A client secret outside Latin-1 never reaches the provider and is no server error."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url)
    provider.routes["/jwks"] = answer(200, KEYS)
    provider.routes["/token"] = answer(200, {"id_token": "x"})
    policy = OutboundPolicy(
        AddressPolicy(OPEN),
        allow_http=True,
        limit_bytes=LOGIN_MAX_ANSWER_BYTES,
        deadline_seconds=2.0,
    )
    settings = OidcSettings(provider.url, "frontdesk", "s\u20acret", ("openid",))
    connector = OidcLogin(settings, outbound.for_logins(), policy)
    await connector.begin(ATTEMPT)
    with pytest.raises(ProviderUnavailable):
        await connector.complete(ATTEMPT, {"code": CODE})
    assert provider.paths() == [WELL_KNOWN, "/jwks"]
    assert reasons(logged) == ["the client secret is not Latin-1 text"]


@pytest.mark.parametrize("route", [WELL_KNOWN, "/jwks", "/token"])
async def test_an_oversize_answer_is_cut_at_the_cap(
    servers: tuple[Server, Server],
    outbound: OutboundClients,
    logged: list[EventDict],
    route: str,
) -> None:
    """Discovery, keys or token answer: an endless body is abandoned past 1 MiB."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url)
    provider.routes["/jwks"] = answer(200, KEYS)
    provider.routes[route] = endless(b" " * 65536)
    connector = login(outbound, provider.url)

    async def sign_in() -> None:
        await connector.begin(ATTEMPT)
        await connector.complete(ATTEMPT, {"code": CODE})

    with anyio.fail_after(10), pytest.raises(ProviderUnavailable):
        await sign_in()
    assert f"more than {LOGIN_MAX_ANSWER_BYTES} bytes" in reasons(logged)[0]


async def test_a_gzip_bomb_is_cut_at_the_cap_without_inflating_it(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """Under 1 MiB of gzip that inflates to 256 MiB stops at the cap, in little memory."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = gzip_bomb(256)
    tracemalloc.start()
    try:
        with pytest.raises(ProviderUnavailable):
            await login(outbound, provider.url).begin(ATTEMPT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"inflates to more than {LOGIN_MAX_ANSWER_BYTES} bytes" in reasons(logged)[0]
    assert peak < 16 * 1024 * 1024


async def test_a_dripped_answer_ends_at_the_deadline(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """A byte every 50 ms never trips a per-read timeout; the whole call's deadline ends it."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = endless(b" ", pause=0.05)
    started = time.monotonic()
    with anyio.fail_after(5), pytest.raises(ProviderUnavailable):
        await login(outbound, provider.url, deadline=0.5).begin(ATTEMPT)
    assert time.monotonic() - started < 2.0
    assert "within the deadline" in reasons(logged)[0]


def late(handler: Handler, seconds: float) -> Handler:
    """``handler``'s answer, after ``seconds``: a provider slow to answer, not a broken one."""

    async def write(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(seconds)
        await handler(writer)

    return write


async def test_discovery_and_keys_share_one_deadline(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    """Each answer alone is within the deadline, both together are not: the sign-in page
    waits on the two, so the step is bounded as a whole (Authlib's requests carry it)."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = late(discovery(provider.url), 0.4)
    provider.routes["/jwks"] = late(answer(200, KEYS), 0.4)
    with anyio.fail_after(5), pytest.raises(ProviderUnavailable):
        await login(outbound, provider.url, deadline=0.6).begin(ATTEMPT)
    assert provider.paths() == [WELL_KNOWN, "/jwks"]
    unavailable = [entry for entry in logged if entry["event"] == "login_provider_unavailable"]
    assert [entry["call"] for entry in unavailable] == ["keys"]
    assert "within the deadline" in unavailable[0]["reason"]


async def test_a_redirect_is_not_followed(
    servers: tuple[Server, Server], outbound: OutboundClients, logged: list[EventDict]
) -> None:
    provider, _ = servers
    provider.routes[WELL_KNOWN] = answer(302, {}, {"Location": f"{provider.url}/elsewhere"})
    provider.routes["/elsewhere"] = discovery(provider.url)
    with pytest.raises(ProviderUnavailable):
        await login(outbound, provider.url).begin(ATTEMPT)
    assert provider.paths() == [WELL_KNOWN]
    assert "a redirect, which is not followed" in reasons(logged)[0]


async def test_a_failed_discovery_is_not_fetched_again_within_the_window(
    servers: tuple[Server, Server], outbound: OutboundClients
) -> None:
    """Consents while the provider fails cost it one call per FAILURE_TTL_SECONDS."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = answer(500, {})
    clock = Clock()
    connector = login(outbound, provider.url, clock=clock)
    for _ in range(5):
        with pytest.raises(ProviderUnavailable):
            await connector.begin(ATTEMPT)
    assert provider.paths() == [WELL_KNOWN]
    clock.now += oidc.FAILURE_TTL_SECONDS
    provider.routes[WELL_KNOWN] = discovery(provider.url)
    provider.routes["/jwks"] = answer(200, KEYS)
    assert (await connector.begin(ATTEMPT)).startswith(f"{provider.url}/authorize?")
    assert provider.paths() == [WELL_KNOWN, WELL_KNOWN, "/jwks"]


async def test_concurrent_consents_share_one_discovery(
    servers: tuple[Server, Server], outbound: OutboundClients
) -> None:
    provider, _ = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url)
    provider.routes["/jwks"] = answer(200, KEYS)
    connector = login(outbound, provider.url)
    await asyncio.gather(*(connector.begin(ATTEMPT) for _ in range(10)))
    assert provider.paths() == [WELL_KNOWN, "/jwks"]


def test_production_calls_no_http_provider() -> None:
    """Outside development the policy refuses a plain http URL before any connection."""
    production = OutboundPolicy(
        AddressPolicy(OPEN), allow_http=False, limit_bytes=1, deadline_seconds=1.0
    )
    assert production.url_problem("http://login.example/token") is not None
    assert production.url_problem("https://login.example/token") is None
    assert production.url_problem("https://user:pw@login.example/token") is not None


# Through the service ------------------------------------------------------------------------


async def test_a_provider_at_an_address_not_opened_is_temporarily_unavailable(
    app: Frontdesk,
    client: httpx.AsyncClient,
    servers: tuple[Server, Server],
    tmp_path: Path,
) -> None:
    """Allow at a company whose provider is on loopback, with loopback not opened (the
    default): a 303 to the client with temporarily_unavailable, never a 500, and the
    provider is not called."""
    provider, _ = servers
    provider.routes[WELL_KNOWN] = discovery(provider.url)
    await flows.add_companies(
        app,
        tmp_path,
        f"""
companies:
  - tenant_key: umbrella
    name: Umbrella Corp
    signin:
      login:
        type: oidc
        issuer: "{provider.url}"
        client_id: frontdesk
        client_secret: {SECRET}
    tools:
      - name: whoami
        description: Says who is asking.
        access: personal
        annotations:
          title: Whoami
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
""",
    )
    page = await flows.consent_page(
        client, await flows.register(client, "umbrella"), flows.Pkce.new(), "umbrella"
    )
    back = flows.redirect_params(await flows.decide(client, flows.flow_of(page), tenant="umbrella"))
    assert back["error"] == "temporarily_unavailable"
    assert provider.received == []
