"""Sign-in through a company's own OpenID Connect provider in a real browser: Frontdesk as a
real process, the npm ``oidc-provider`` as the company's login, Chromium clicking through
consent, the provider's login and consent, and back through Frontdesk to the client."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from tests.browser.conftest import ClientRedirectUri, artifact, require_chromium
from tests.browser.oauth_client import OAuthClient, register_client
from tests.conftest import unavailable
from tests.live.conftest import LiveService, free_port, running_service
from tests.support.oidc_provider import OidcProvider, OidcProviderError, run_oidc_provider

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "hooli"
COMPANY_NAME = "Hooli"
CLIENT_NAME = "Browser Test Assistant"
RP_CLIENT_ID = "frontdesk-hooli"
RP_SECRET = "hooli-relying-party-secret-0123456789"
SECRET_ENV = "HOOLI_OIDC_SECRET"
ACCOUNT = {
    "sub": "gavin-0001",
    "email": "gavin@hooli.example",
    "email_verified": True,
    "name": "Gavin Belson",
}


@pytest.fixture(scope="module")
def service_port() -> int:
    """The service's port, chosen first: the provider must know the callback URL up front."""
    require_chromium()
    return free_port()


@pytest.fixture(scope="module")
def provider(service_port: int) -> Iterator[OidcProvider]:
    """The company's identity provider, with Frontdesk registered as a confidential client."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        unavailable("the OIDC test provider needs Node.js 20+ and npm on PATH")
    callback = f"http://127.0.0.1:{service_port}/v1/{TENANT}/oauth/callback"
    client = {
        "client_id": RP_CLIENT_ID,
        "client_secret": RP_SECRET,
        "redirect_uris": [callback],
        "token_endpoint_auth_method": "client_secret_basic",
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
    }
    try:
        with run_oidc_provider(clients=[client], accounts=[ACCOUNT]) as running:
            yield running
    except OidcProviderError as error:
        unavailable(f"the OIDC test provider could not start: {error}")


@pytest.fixture(scope="module")
def oidc_service(
    provider: OidcProvider, service_port: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveService]:
    """Frontdesk with hooli signing customers in at the provider; the secret only in its env."""
    workdir = tmp_path_factory.mktemp("browser-oidc")
    companies = workdir / "hooli.yaml"
    companies.write_text(
        f"""
companies:
  - tenant_key: {TENANT}
    name: {COMPANY_NAME}
    signin:
      login:
        type: oidc
        issuer: "{provider.issuer}"
        client_id: {RP_CLIENT_ID}
        client_secret_env: {SECRET_ENV}
    tools:
      - name: whoami
        description: Says who is asking.
        access: personal
        annotations:
          title: whoami
          readOnlyHint: false
          destructiveHint: true
          idempotentHint: false
          openWorldHint: true
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
"""
    )
    with running_service(
        "sqlite",
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        workdir,
        port=service_port,
        # The provider listens on loopback, which identity providers may reach only when
        # the operator opens it (outbound_policy).
        extra_env={SECRET_ENV: RP_SECRET, "FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.0/8"},
        extra_companies_files=[companies],
    ) as service:
        yield service


def hop(url: str, service: LiveService, provider: OidcProvider) -> str:
    """Who a browser navigation went to, and where: "frontdesk /v1/…", "provider /auth"."""
    path = urlsplit(url).path
    if url.startswith(service.base_url):
        return f"frontdesk {path}"
    if url.startswith(provider.issuer):
        return f"provider /{path.split('/')[1]}"
    return f"client {path}"


@pytest.fixture
def client(oidc_service: LiveService, redirect_uri: ClientRedirectUri) -> OAuthClient:
    return register_client(oidc_service, TENANT, redirect_uri.url, CLIENT_NAME)


def test_customer_signs_in_at_the_company_provider_and_the_client_gets_a_working_code(
    page: Page,
    client: OAuthClient,
    redirect_uri: ClientRedirectUri,
    provider: OidcProvider,
    oidc_service: LiveService,
) -> None:
    """Allow → the provider's login and consent → our callback → the client; whoami is them."""
    navigations: list[str] = []

    def record(request: Request) -> None:
        if request.is_navigation_request():
            navigations.append(request.url)

    page.on("request", record)
    authorization = client.authorization()
    page.goto(authorization.url)
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Allow {CLIENT_NAME} to use your {COMPANY_NAME} account?"
    )
    page.get_by_role("button", name="Allow").click()

    page.wait_for_url(f"{provider.issuer}/interaction/**")
    login = page.get_by_placeholder("Enter any login")
    expect(login).to_be_visible()
    page.screenshot(path=artifact("oidc-login.png"), full_page=True)
    login.fill(str(ACCOUNT["sub"]))
    page.get_by_placeholder("and password").fill("any password will do")
    page.get_by_role("button", name="Sign-in").click()

    # A first grant to this client: the provider asks the customer to consent too.
    page.get_by_role("button", name="Continue").click()

    page.wait_for_url(re.compile(rf"^{re.escape(client.redirect_uri)}\?"))
    expect(page.locator("body")).to_have_text("done")
    arrived = redirect_uri.next_redirect()
    assert set(arrived.query) == {"code", "state", "iss"}, arrived.query
    assert arrived.query["state"] == authorization.state
    assert arrived.query["iss"] == client.issuer

    oauth = f"/v1/{TENANT}/oauth"
    hops = [hop(url, oidc_service, provider) for url in navigations]
    assert hops[:2] == [f"frontdesk {oauth}/authorize", f"frontdesk {oauth}/consent"], hops
    assert hops[-2:] == [f"frontdesk {oauth}/callback", "client /callback"], hops
    # Everything in between is the customer at their company's provider: login, consent.
    assert {hop.split()[0] for hop in hops[2:-2]} == {"provider"}, hops

    tokens = client.exchange(arrived.query["code"], authorization.verifier)
    assert client.whoami(tokens["access_token"]) == {
        "guest": False,
        "subject": ACCOUNT["sub"],
        "email": ACCOUNT["email"],
        "name": ACCOUNT["name"],
        "scopes": ["email", "profile"],
    }
