"""Sign-in through a company's OpenID Connect provider: a real one (npm ``oidc-provider``) on
loopback, driven over HTTP like a browser would (DESIGN: sign-in flow; ``login/oidc``)."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.store.tables import customers
from tests.conftest import BASE_URL, unavailable
from tests.oauth import flows
from tests.oauth.conftest import Serve
from tests.support.oidc_provider import (
    OidcProvider,
    OidcProviderError,
    complete_login,
    ensure_installed,
    run_oidc_provider,
)

pytestmark = pytest.mark.anyio

TENANT = "umbrella"
CALLBACK = f"{BASE_URL}/v1/{TENANT}/oauth/callback"
RP_CLIENT_ID = "frontdesk-umbrella"
RP_SECRET = "umbrella-relying-party-secret-0123456789"
SECRET_ENV = "UMBRELLA_OIDC_SECRET"
ALICE = {
    "sub": "alice-0001",
    "email": "alice@umbrella.example",
    "email_verified": True,
    "name": "Alice Abernathy",
}


def provider_clients() -> list[dict[str, Any]]:
    return [
        {
            "client_id": RP_CLIENT_ID,
            "client_secret": RP_SECRET,
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "client_secret_basic",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
        }
    ]


@pytest.fixture(scope="module")
def provider_installed() -> None:
    """Node.js, npm and the provider's npm packages are in place, or the test is skipped."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        unavailable("the OIDC test provider needs Node.js 20+ and npm on PATH")
    try:
        ensure_installed()
    except OidcProviderError as error:
        unavailable(f"the OIDC test provider could not be installed: {error}")


@pytest.fixture(scope="module")
def provider(provider_installed: None) -> Iterator[OidcProvider]:
    """One real provider for the module, with Alice's account."""
    with run_oidc_provider(clients=provider_clients(), accounts=[ALICE]) as running:
        yield running


def company_yaml(tenant: str, issuer: str) -> str:
    return f"""
companies:
  - tenant_key: {tenant}
    name: Umbrella Corp
    signin:
      login:
        type: oidc
        issuer: "{issuer}"
        client_id: {RP_CLIENT_ID}
        client_secret_env: {SECRET_ENV}
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
"""


ApplyCompany = Callable[[str], Awaitable[None]]


@pytest.fixture
def make_settings(make_settings: Callable[..., Settings]) -> Callable[..., Settings]:
    """The test provider listens on loopback, which the operator must open to identity
    providers as to backends (FRONTDESK_BACKEND_ALLOWED_NETWORKS, outbound_policy)."""

    def make(**overrides: Any) -> Settings:
        return make_settings(**{"backend_allowed_networks": ["127.0.0.0/8"], **overrides})

    return make


@pytest.fixture
def oidc_company(app: Frontdesk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ApplyCompany:
    """Applies umbrella with sign-in at the given issuer; its client secret is in the env."""
    monkeypatch.setenv(SECRET_ENV, RP_SECRET)

    async def apply(issuer: str) -> None:
        await flows.add_companies(app, tmp_path, company_yaml(TENANT, issuer))

    return apply


@dataclass(frozen=True, slots=True)
class Started:
    """A sign-in sent on to the provider: the client's side of it, and where the browser goes."""

    client_id: str
    pkce: flows.Pkce
    location: str


async def to_provider(client: httpx.AsyncClient, state: str = "oidc-state") -> Started:
    """authorize → consent Allow at umbrella; the 303 it answers with."""
    client_id = await flows.register(client, TENANT)
    pkce = flows.Pkce.new()
    page = await flows.consent_page(client, client_id, pkce, TENANT, state=state)
    allowed = await flows.decide(client, flows.flow_of(page), tenant=TENANT)
    assert allowed.status_code == 303, allowed.text
    return Started(client_id, pkce, allowed.headers["location"])


async def at_provider(authorize_url: str, login: str = "alice-0001") -> str:
    """Sign in at the provider in a browser of its own; the callback URL it sends back to."""
    async with httpx.AsyncClient(timeout=10.0) as provider_browser:
        return await complete_login(provider_browser, authorize_url, login=login)


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode(query)))


async def redeem(client: httpx.AsyncClient, started: Started, code: str) -> flows.Tokens:
    signed_in = flows.SignIn(
        started.client_id,
        code,
        None,
        flows.issuer(TENANT),
        started.pkce,
        flows.REDIRECT_URI,
        TENANT,
    )
    return flows.tokens_of(await flows.exchange(client, signed_in), started.client_id, TENANT)


async def sign_in_at(client: httpx.AsyncClient, login: str = "alice-0001") -> flows.Tokens:
    """The whole round trip through the provider, and the code exchanged for tokens."""
    started = await to_provider(client)
    callback = await at_provider(started.location, login)
    back = flows.redirect_params(await client.get(callback))
    return await redeem(client, started, back["code"])


async def customer_rows(app: Frontdesk) -> list[tuple[Any, ...]]:
    query = select(customers.c.tenant_key, customers.c.subject, customers.c.email, customers.c.name)
    async with app.services.database.engine.connect() as connection:
        return [tuple(row) for row in (await connection.execute(query)).all()]


# The flow ----------------------------------------------------------------------------------


async def test_a_customer_signs_in_through_the_companys_provider(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """Provider login → our callback → code, state, iss → token → whoami shows the identity."""
    await oidc_company(provider.issuer)
    started = await to_provider(client, state="s-1")
    assert started.location.startswith(f"{provider.issuer}/"), started.location
    sent = dict(parse_qsl(urlsplit(started.location).query))
    assert sent["client_id"] == RP_CLIENT_ID
    assert sent["redirect_uri"] == CALLBACK
    assert sent["code_challenge_method"] == "S256"
    assert sent["nonce"]
    callback = await at_provider(started.location)
    assert callback.startswith(CALLBACK + "?"), callback
    back = flows.redirect_params(await client.get(callback))
    assert back["state"] == "s-1"
    assert back["iss"] == flows.issuer(TENANT)
    tokens = await redeem(client, started, back["code"])
    result = await flows.whoami_result(client, tokens.access, TENANT)
    assert result["subject"] == ALICE["sub"]
    assert result["email"] == ALICE["email"]
    assert result["name"] == ALICE["name"]


async def test_the_request_to_the_provider_carries_no_verifier_or_secret(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """The browser sees the challenge, never the PKCE verifier or the client secret."""
    await oidc_company(provider.issuer)
    started = await to_provider(client)
    sent = dict(parse_qsl(urlsplit(started.location).query))
    assert "code_verifier" not in sent
    assert "client_secret" not in sent
    assert RP_SECRET not in started.location


async def test_the_customer_is_recorded_then_updated_on_the_next_sign_in(
    app: Frontdesk, client: httpx.AsyncClient, oidc_company: ApplyCompany, provider_installed: None
) -> None:
    """The first sign-in records the customer; the next one, after a rename, updates them."""
    # The provider restarts on its port with the renamed account and new signing keys, so
    # the second sign-in also exercises the refetch of rotated keys.
    renamed = {**ALICE, "name": "Alice A. Redfield"}
    with run_oidc_provider(clients=provider_clients(), accounts=[ALICE]) as first:
        await oidc_company(first.issuer)
        tokens = await sign_in_at(client)
        assert (await flows.whoami_result(client, tokens.access, TENANT))["name"] == ALICE["name"]
    port = urlsplit(first.issuer).port
    assert port is not None
    assert await customer_rows(app) == [(TENANT, ALICE["sub"], ALICE["email"], ALICE["name"])]
    with run_oidc_provider(clients=provider_clients(), accounts=[renamed], port=port) as second:
        assert second.issuer == first.issuer
        tokens = await sign_in_at(client)
    assert await customer_rows(app) == [(TENANT, ALICE["sub"], ALICE["email"], renamed["name"])]
    assert (await flows.whoami_result(client, tokens.access, TENANT))["name"] == renamed["name"]


async def test_overlong_claims_are_clipped_not_a_server_error(
    serve: Serve,
    postgres_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider_installed: None,
) -> None:
    """A provider's 300-character name fits the customer record on PostgreSQL (200 kept)."""
    monkeypatch.setenv(SECRET_ENV, RP_SECRET)
    served = await serve(database_url=postgres_url)
    verbose = {**ALICE, "name": "N" * 300}
    with run_oidc_provider(clients=provider_clients(), accounts=[verbose]) as verbose_provider:
        await flows.add_companies(
            served.app, tmp_path, company_yaml(TENANT, verbose_provider.issuer)
        )
        tokens = await sign_in_at(served.client)
    result = await flows.whoami_result(served.client, tokens.access, TENANT)
    assert result["name"] == "N" * 200
    assert result["email"] == ALICE["email"]


# Refusals ----------------------------------------------------------------------------------


async def test_an_id_token_with_another_nonce_is_refused(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """The provider signs a nonce we did not send: access_denied back to the client, no code."""
    await oidc_company(provider.issuer)
    started = await to_provider(client, state="nonce-state")
    callback = await at_provider(with_query(started.location, nonce="not-the-nonce-we-sent"))
    back = flows.redirect_params(await client.get(callback))
    assert back["error"] == "access_denied"
    assert back["state"] == "nonce-state"
    assert back["iss"] == flows.issuer(TENANT)
    assert "code" not in back


async def test_a_tampered_state_is_refused_with_a_page(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """A callback whose state was changed: 400 page, nothing sent to the client."""
    await oidc_company(provider.issuer)
    started = await to_provider(client)
    callback = await at_provider(started.location)
    state = dict(parse_qsl(urlsplit(callback).query))["state"]
    tampered = state[:-1] + ("A" if state[-1] != "A" else "B")
    response = await client.get(with_query(callback, state=tampered))
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert "location" not in response.headers


async def test_a_callback_in_another_browser_is_refused(
    client: httpx.AsyncClient,
    provider: OidcProvider,
    oidc_company: ApplyCompany,
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    """The provider's answer opened in a browser that did not start the sign-in: 400 page."""
    await oidc_company(provider.issuer)
    started = await to_provider(client)
    callback = await at_provider(started.location)
    async with browser() as other:
        response = await other.get(callback)
    assert response.status_code == 400
    assert "location" not in response.headers


async def test_a_callback_cannot_be_replayed(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """Once the sign-in finished, the same callback URL is refused."""
    await oidc_company(provider.issuer)
    started = await to_provider(client)
    callback = await at_provider(started.location)
    assert flows.redirect_params(await client.get(callback))["code"]
    replay = await client.get(callback)
    assert replay.status_code == 400
    assert "location" not in replay.headers


async def test_an_answer_naming_another_issuer_is_refused(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """An iss other than the company's provider (RFC 9207): access_denied, no code."""
    await oidc_company(provider.issuer)
    started = await to_provider(client)
    callback = await at_provider(started.location)
    back = flows.redirect_params(await client.get(with_query(callback, iss="https://evil.example")))
    assert back["error"] == "access_denied"
    assert "code" not in back


async def test_a_login_the_provider_refuses_is_access_denied(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """The provider answers error=access_denied: the client is told so."""
    await oidc_company(provider.issuer)
    started = await to_provider(client, state="refused")
    callback = await at_provider(started.location, login="nobody-known")
    back = flows.redirect_params(await client.get(callback))
    assert back["error"] == "access_denied"
    assert back["state"] == "refused"
    assert "code" not in back


async def test_an_unreachable_provider_is_temporarily_unavailable(
    client: httpx.AsyncClient, oidc_company: ApplyCompany
) -> None:
    """Allow with the provider down: 303 to the client with temporarily_unavailable."""
    await oidc_company("http://127.0.0.1:1")
    started_page = await flows.consent_page(
        client, await flows.register(client, TENANT), flows.Pkce.new(), TENANT, state="down"
    )
    back = flows.redirect_params(
        await flows.decide(client, flows.flow_of(started_page), tenant=TENANT)
    )
    assert back["error"] == "temporarily_unavailable"
    assert back["state"] == "down"
    assert back["iss"] == flows.issuer(TENANT)


async def test_a_provider_gone_before_the_callback_is_temporarily_unavailable(
    client: httpx.AsyncClient, oidc_company: ApplyCompany, provider_installed: None
) -> None:
    """The provider stops between login and our code exchange: the client may retry later."""
    with run_oidc_provider(clients=provider_clients(), accounts=[ALICE]) as short_lived:
        await oidc_company(short_lived.issuer)
        started = await to_provider(client, state="gone")
        callback = await at_provider(started.location)
    back = flows.redirect_params(await client.get(callback))
    assert back["error"] == "temporarily_unavailable"
    assert back["state"] == "gone"
    assert "code" not in back


async def test_a_missing_client_secret_is_temporarily_unavailable(
    client: httpx.AsyncClient,
    provider: OidcProvider,
    oidc_company: ApplyCompany,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The secret's environment variable is unset: the client is told to try later."""
    await oidc_company(provider.issuer)
    monkeypatch.delenv(SECRET_ENV)
    page = await flows.consent_page(
        client, await flows.register(client, TENANT), flows.Pkce.new(), TENANT
    )
    back = flows.redirect_params(await flows.decide(client, flows.flow_of(page), tenant=TENANT))
    assert back["error"] == "temporarily_unavailable"


async def test_the_dev_login_form_is_not_offered_by_an_oidc_company(
    client: httpx.AsyncClient, provider: OidcProvider, oidc_company: ApplyCompany
) -> None:
    """umbrella signs customers in at its provider; its /login form is 404 even mid-sign-in."""
    await oidc_company(provider.issuer)
    client_id = await flows.register(client, TENANT)
    page = await flows.consent_page(client, client_id, flows.Pkce.new(), TENANT)
    flow = flows.flow_of(page)
    shown = await client.get(flows.oauth_path("login", TENANT), params={"flow": flow})
    assert shown.status_code == 404
    posted = await client.post(
        flows.oauth_path("login", TENANT),
        data={"flow": flow, "email": "mallory@umbrella.example"},
        headers=flows.FORM,
    )
    assert posted.status_code == 404
    assert "location" not in posted.headers
