"""The console for companies in Chromium, against Frontdesk running as a real process: a
company's staff member signs in through the company's dev login, finds every page at a
phone's and a desktop's width (390 and 1280 px) with nothing scrolling sideways and no
axe-core violation, calls a tool as a guest, previews the consent page in new colours,
and cuts off a customer's assistant, whose next MCP call is refused. Screenshots go to
test-artifacts/ (console-*.png)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import ClientRedirectUri, artifact, require_chromium
from tests.browser.oauth_client import TIMEOUT, mcp_status, register_client
from tests.browser.test_consent_page import (
    AXE,
    HERE,
    assert_accessible,
    assert_no_sideways_scroll,
    open_page,
)
from tests.live.conftest import LiveService, running_service
from tests.support.npm import ensure_installed

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "vandelay"
COMPANY = "Vandelay Industries"
STAFF = "milton@vandelay.example"
CUSTOMER = "george@customer.example"
CLIENT_NAME = "Console Test Assistant"
PAGES = {
    "tools": "Tools",
    "signin": "Sign-in and branding",
    "clients": "Clients and grants",
    "usage": "Usage",
    "audit": "Audit",
}
WIDTHS = [pytest.param(390, id="390px"), pytest.param(1280, id="1280px")]


@pytest.fixture(scope="module")
def console_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    require_chromium()
    workdir = tmp_path_factory.mktemp("browser-console")
    companies = workdir / "console.yaml"
    companies.write_text(
        f"""
companies:
  - tenant_key: {TENANT}
    name: {COMPANY}
    signin:
      login: {{type: dev}}
    console:
      login: {{type: dev}}
      staff: {{domains: [vandelay.example]}}
    tools:
      - name: echo
        title: Echo
        description: Repeats the text it is given.
        annotations:
          title: echo
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        input_schema:
          type: object
          properties: {{text: {{type: string}}}}
          required: [text]
        provider: {{type: python, target: "tests.fixtures.tools:echo"}}
      - name: whoami
        description: Says who is asking.
        access: personal
        annotations:
          title: whoami
          readOnlyHint: false
          destructiveHint: true
          idempotentHint: false
          openWorldHint: false
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
"""
    )
    with running_service(
        "sqlite",
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        workdir,
        extra_companies_files=[companies],
    ) as service:
        yield service


@pytest.fixture(scope="module")
def axe() -> Path:
    ensure_installed(HERE)
    return AXE


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    opened: list[BrowserContext] = []
    yield opened
    for context in opened:
        context.close()


def sign_in(page: Page, service: LiveService, email: str = STAFF) -> None:
    """From the console's front page, through the company's dev login, to its tools."""
    page.goto(f"{service.base_url}/console/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to the console")
    page.get_by_label("Your company's key").fill(TENANT)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Sign in to the {COMPANY} console")
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{service.base_url}/console/{TENANT}/tools")


def test_the_preview_shows_the_consent_page_in_new_colours(
    page: Page, console_service: LiveService
) -> None:
    sign_in(page, console_service)
    page.goto(f"{console_service.base_url}/console/{TENANT}/signin")
    page.get_by_label("Accent colour (#rrggbb)").fill("#7a1f5c")
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"to use your {COMPANY} account?")
    allow = page.get_by_role("button", name="Allow")
    expect(allow).to_have_css("background-color", "rgb(122, 31, 92)")
    page.screenshot(path=artifact("console-consent-preview.png"), full_page=True)
    # Nothing was saved: the page still offers the stored (empty) colour.
    page.goto(f"{console_service.base_url}/console/{TENANT}/signin")
    expect(page.get_by_label("Accent colour (#rrggbb)")).to_have_value("")


def test_switching_a_tool_off_in_the_console_hides_it_from_clients(
    page: Page, console_service: LiveService
) -> None:
    def listed() -> list[str]:
        response = httpx.post(
            console_service.mcp_url(TENANT),
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
            timeout=TIMEOUT,
        )
        return [tool["name"] for tool in response.json()["result"]["tools"]]

    sign_in(page, console_service)
    page.get_by_role("button", name="Disable echo").click()
    expect(page.get_by_role("button", name="Enable echo")).to_be_visible()
    # One instance here, whose own change is served at once.
    assert listed() == ["whoami"]
    page.get_by_role("button", name="Enable echo").click()
    expect(page.get_by_role("button", name="Disable echo")).to_be_visible()
    assert listed() == ["echo", "whoami"]


def test_revoking_a_grant_in_the_console_refuses_the_assistants_next_call(
    page: Page,
    console_service: LiveService,
    redirect_uri: ClientRedirectUri,
) -> None:
    client = register_client(console_service, TENANT, redirect_uri.url, CLIENT_NAME)
    authorization = client.authorization()
    page.goto(authorization.url)
    page.get_by_role("button", name="Allow").click()
    page.get_by_label("Email").fill(CUSTOMER)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(rf"^{re.escape(client.redirect_uri)}\?"))
    arrived = redirect_uri.next_redirect()
    access = client.exchange(arrived.query["code"], authorization.verifier)["access_token"]
    assert mcp_status(console_service, TENANT, access) == 200

    sign_in(page, console_service)
    page.get_by_role("link", name="Clients and grants").click()
    row = page.get_by_role("row").filter(has_text=CUSTOMER)
    expect(row).to_contain_text(client.client_id)
    row.get_by_role("button", name=re.compile(r"^Revoke grant \d+ of ")).click()
    page.wait_for_url(f"{console_service.base_url}/console/{TENANT}/clients")
    expect(page.get_by_role("row").filter(has_text=CUSTOMER)).to_contain_text("revoked")
    assert mcp_status(console_service, TENANT, access) == 401

    page.get_by_role("link", name="Audit").click()
    expect(page.get_by_role("cell", name="family_revoked").first).to_be_visible()


# Last: the pages then hold the grants, events and calls the tests above made.
@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_and_passes_axe(
    browser: Browser,
    contexts: list[BrowserContext],
    console_service: LiveService,
    axe: Path,
    width: int,
) -> None:
    page = open_page(browser, contexts, width, bypass_csp=True)
    page.goto(f"{console_service.base_url}/console/")
    assert_no_sideways_scroll(page)
    assert_accessible(page, axe, "console sign-in page")
    page.screenshot(path=artifact(f"console-signin-{width}.png"), full_page=True)

    sign_in(page, console_service)
    for slug, heading in PAGES.items():
        page.goto(f"{console_service.base_url}/console/{TENANT}/{slug}")
        expect(page.get_by_role("heading", level=1)).to_have_text(heading)
        assert_no_sideways_scroll(page)
        assert_accessible(page, axe, f"console {slug} page")
        page.screenshot(path=artifact(f"console-{slug}-{width}.png"), full_page=True)

    # A tool's edit form, opened.
    page.goto(f"{console_service.base_url}/console/{TENANT}/tools")
    page.get_by_text("Edit whoami").click()
    expect(page.get_by_role("group", name="Annotations")).to_be_visible()
    expect(page.locator("#access-2")).to_have_value("personal")
    assert_no_sideways_scroll(page)
    assert_accessible(page, axe, "console tools page with an edit form open")
    page.screenshot(path=artifact(f"console-tool-edit-{width}.png"), full_page=True)

    # The test call's result, shown on the tools page.
    page.goto(f"{console_service.base_url}/console/{TENANT}/tools")
    page.get_by_label("Tool", exact=True).select_option("echo")
    page.get_by_label("Arguments (JSON)").fill('{"text": "hello from the console"}')
    page.get_by_role("button", name="Call").click()
    expect(page.get_by_role("heading", name="Test call of echo")).to_be_visible()
    expect(page.locator("pre")).to_contain_text("hello from the console")
    assert_no_sideways_scroll(page)
    assert_accessible(page, axe, "console tools page with a result")
    page.screenshot(path=artifact(f"console-test-call-{width}.png"), full_page=True)
