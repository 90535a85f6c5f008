"""Signing in to the console through a real OpenID provider (the npm ``oidc-provider``), in
Chromium, against Frontdesk as a real process: a company's staff member through the
provider the company names for its staff, an operator through the deployment's, who may
then open any company; an address the provider does not vouch for is refused."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import artifact, require_chromium
from tests.conftest import unavailable
from tests.live.conftest import LiveService, free_port, running_service
from tests.support.oidc_provider import OidcProvider, OidcProviderError, run_oidc_provider

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "piedpiper"
COMPANY = "Pied Piper"
STAFF_CLIENT, STAFF_SECRET = "piedpiper-console", "piedpiper-console-secret-0123456789"
OPERATOR_CLIENT, OPERATOR_SECRET = "frontdesk-operators", "frontdesk-operators-secret-012345"
SECRET_ENV = "PIEDPIPER_CONSOLE_SECRET"
RICHARD = {
    "sub": "richard-0001",
    "email": "richard@piedpiper.example",
    "email_verified": True,
    "name": "Richard Hendricks",
}
# Staff by domain, but the provider does not vouch for the address.
GILFOYLE = {"sub": "gilfoyle-0002", "email": "gilfoyle@piedpiper.example", "name": "Gilfoyle"}
OPERATOR = {"sub": "ops-0003", "email": "ops@frontdesk.example", "email_verified": True}


@pytest.fixture(scope="module")
def service_port() -> int:
    """Chosen first: the provider must know the console's callback URL up front."""
    require_chromium()
    return free_port()


@pytest.fixture(scope="module")
def provider(service_port: int) -> Iterator[OidcProvider]:
    if shutil.which("node") is None or shutil.which("npm") is None:
        unavailable("the OIDC test provider needs Node.js 20+ and npm on PATH")
    callback = f"http://127.0.0.1:{service_port}/console/callback"

    def client(client_id: str, secret: str) -> dict[str, Any]:
        return {
            "client_id": client_id,
            "client_secret": secret,
            "redirect_uris": [callback],
            "token_endpoint_auth_method": "client_secret_basic",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
        }

    try:
        with run_oidc_provider(
            clients=[client(STAFF_CLIENT, STAFF_SECRET), client(OPERATOR_CLIENT, OPERATOR_SECRET)],
            accounts=[RICHARD, GILFOYLE, OPERATOR],
        ) as running:
            yield running
    except OidcProviderError as error:
        unavailable(f"the OIDC test provider could not start: {error}")


@pytest.fixture(scope="module")
def service(
    provider: OidcProvider, service_port: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveService]:
    workdir = tmp_path_factory.mktemp("browser-console-oidc")
    companies = workdir / "piedpiper.yaml"
    companies.write_text(
        f"""
companies:
  - tenant_key: {TENANT}
    name: {COMPANY}
    console:
      login:
        type: oidc
        issuer: "{provider.issuer}"
        client_id: {STAFF_CLIENT}
        client_secret_env: {SECRET_ENV}
      staff: {{domains: [piedpiper.example]}}
    tools:
      - name: echo
        description: Repeats text.
        annotations:
          title: Echo
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        provider: {{type: python, target: "tests.fixtures.tools:echo"}}
"""
    )
    with running_service(
        "sqlite",
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        workdir,
        port=service_port,
        extra_env={
            SECRET_ENV: STAFF_SECRET,
            # The provider is on loopback, which logins reach only when the operator opens it.
            "FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.0/8",
            "FRONTDESK_CONSOLE_OPERATOR_ISSUER": provider.issuer,
            "FRONTDESK_CONSOLE_OPERATOR_CLIENT_ID": OPERATOR_CLIENT,
            "FRONTDESK_CONSOLE_OPERATOR_CLIENT_SECRET": OPERATOR_SECRET,
            "FRONTDESK_CONSOLE_OPERATOR_EMAILS": str(OPERATOR["email"]),
        },
        extra_companies_files=[companies],
    ) as running:
        yield running


def at_the_provider(page: Page, provider: OidcProvider, account: dict[str, Any]) -> None:
    """Log in at the provider as ``account`` and allow the console."""
    page.wait_for_url(f"{provider.issuer}/interaction/**")
    page.get_by_placeholder("Enter any login").fill(str(account["sub"]))
    page.get_by_placeholder("and password").fill("any password will do")
    page.get_by_role("button", name="Sign-in").click()
    # A first sign-in to this client: the provider asks for consent too.
    page.get_by_role("button", name="Continue").click()


def staff_sign_in(page: Page, service: LiveService) -> None:
    page.goto(f"{service.base_url}/console/")
    page.get_by_label("Your company's key").fill(TENANT)
    page.get_by_role("button", name="Sign in", exact=True).click()


def test_staff_sign_in_at_their_companys_provider(
    page: Page, service: LiveService, provider: OidcProvider
) -> None:
    staff_sign_in(page, service)
    at_the_provider(page, provider, RICHARD)
    page.wait_for_url(f"{service.base_url}/console/{TENANT}/tools")
    expect(page.get_by_text(str(RICHARD["email"]))).to_be_visible()
    expect(page.get_by_role("heading", name="echo", level=2)).to_be_visible()
    # Staff never see another company, nor the operators' list.
    page.goto(f"{service.base_url}/console/initech/tools")
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
    page.goto(f"{service.base_url}/console/")
    page.wait_for_url(f"{service.base_url}/console/{TENANT}/tools")


def test_an_address_the_provider_does_not_vouch_for_is_refused(
    page: Page, service: LiveService, provider: OidcProvider
) -> None:
    staff_sign_in(page, service)
    at_the_provider(page, provider, GILFOYLE)
    expect(page.get_by_role("heading", level=1)).to_have_text("This account is not staff here")
    page.screenshot(path=artifact("console-refused.png"), full_page=True)
    page.goto(f"{service.base_url}/console/{TENANT}/tools")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to the console")


def test_an_operator_signs_in_at_the_deployments_provider_and_opens_any_company(
    page: Page, service: LiveService, provider: OidcProvider
) -> None:
    page.goto(f"{service.base_url}/console/")
    page.get_by_role("button", name="Sign in as an operator").click()
    at_the_provider(page, provider, OPERATOR)
    page.wait_for_url(f"{service.base_url}/console/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Companies")
    page.screenshot(path=artifact("console-companies-1280.png"), full_page=True)
    page.get_by_role("link", name="Initech").click()
    page.wait_for_url(f"{service.base_url}/console/initech/tools")
    expect(page.get_by_role("heading", name="whoami", level=2)).to_be_visible()
    page.get_by_role("link", name="All companies").click()
    page.get_by_role("link", name=COMPANY).click()
    page.wait_for_url(f"{service.base_url}/console/{TENANT}/tools")
