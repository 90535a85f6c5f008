"""The consent, login and error pages as customers meet them, in Chromium at a phone's and a
desktop's width (390 and 1280 px; 320 for scrolling): nothing scrolls sideways, even for a
200-character client name; the company's branding shows, its logo allowed by the page's
Content-Security-Policy; a metadata-document client shows its verified host and a
registered one is marked unverified; a second sign-in with the same scopes skips the page;
and axe-core finds no accessibility violation. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from tests.browser.conftest import (
    LOOPBACK,
    TIMEOUT_MS,
    ClientRedirectUri,
    artifact,
    require_chromium,
)
from tests.browser.oauth_client import OAuthClient, register_client
from tests.live.conftest import LiveService, documents_environment, running_service
from tests.support.https_documents import Answer, HttpsDocuments, run_https_documents
from tests.support.npm import ensure_installed

pytestmark = [pytest.mark.browser, pytest.mark.live]

HERE = Path(__file__).parent
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
TENANT = "roasters"
COMPANY = "Demo Coffee Roasters"
# A client name as long as registration takes, with no space to break at.
LONG_NAME = "Assistant" + "X" * 191
LOGO = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="60" viewBox="0 0 240 60">'
    b'<rect width="240" height="60" rx="8" fill="#3b2314"/></svg>'
)
NARROWEST, PHONE, DESKTOP = 320, 390, 1280
MARKED = "\u26a0 can change or delete things"
WIDTHS = [pytest.param(PHONE, id="390px"), pytest.param(DESKTOP, id="1280px")]
ALL_WIDTHS = [pytest.param(NARROWEST, id="320px"), *WIDTHS]


def companies_file(directory: Path, documents: HttpsDocuments) -> Path:
    path = directory / "branded-companies.yaml"
    path.write_text(
        f"""
companies:
  - tenant_key: {TENANT}
    name: {COMPANY}
    signin:
      login: {{type: dev}}
    branding:
      logo_url: {documents.url("/brand/logo.svg")}
      logo_alt: {COMPANY}
      accent_color: "#ffd500"
      privacy_url: https://roasters.example/privacy
      terms_url: https://roasters.example/terms
      support: help@roasters.example
    tools:
      - name: whoami
        title: Who I am
        description: Says who is asking.
        access: personal
        annotations:
          title: whoami
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
      - name: cancel_order
        title: Cancel my order
        description: Cancels one of the customer's orders.
        access: personal
        annotations:
          title: cancel_order
          readOnlyHint: false
          destructiveHint: true
          idempotentHint: false
          openWorldHint: false
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpsDocuments]:
    """Where the logo and a client's metadata document are published, over https."""
    with run_https_documents(tmp_path_factory.mktemp("brand-documents")) as server:
        server.serve("/brand/logo.svg", Answer(LOGO, headers={"Content-Type": "image/svg+xml"}))
        yield server


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, documents: HttpsDocuments
) -> Iterator[LiveService]:
    require_chromium()
    workdir = tmp_path_factory.mktemp("consent-page")
    with running_service(
        "sqlite",
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        workdir,
        extra_env=documents_environment(documents),
        extra_companies_files=[companies_file(workdir, documents)],
    ) as running:
        yield running


@pytest.fixture(scope="module")
def axe() -> Path:
    ensure_installed(HERE)
    return AXE


def new_context(browser: Browser, width: int, *, bypass_csp: bool = False) -> BrowserContext:
    """A fresh browser at ``width``; it trusts the test CA's logo server (loopback only).

    ``bypass_csp`` only to inject axe-core, an inline script the pages' policy refuses."""
    context = browser.new_context(
        viewport={"width": width, "height": 844 if width < 800 else 900},
        ignore_https_errors=True,
        bypass_csp=bypass_csp,
    )
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)

    def stay_on_loopback(route: Route) -> None:
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            route.abort()

    context.route("**/*", stay_on_loopback)
    return context


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    opened: list[BrowserContext] = []
    yield opened
    for context in opened:
        context.close()


def open_page(
    browser: Browser, contexts: list[BrowserContext], width: int, *, bypass_csp: bool = False
) -> Page:
    context = new_context(browser, width, bypass_csp=bypass_csp)
    contexts.append(context)
    return context.new_page()


def assert_no_sideways_scroll(page: Page) -> None:
    widths = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"scrollWidth {widths[0]} > innerWidth {widths[1]}"


def assert_accessible(page: Page, axe: Path, what: str) -> None:
    page.add_script_tag(path=str(axe))
    violations: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document)).violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)}))"""
    )
    assert violations == [], f"axe-core on the {what}: {violations}"


def registered(service: LiveService, redirect_uri: ClientRedirectUri, name: str) -> OAuthClient:
    return register_client(service, TENANT, redirect_uri.url, name)


def document_client(
    service: LiveService, documents: HttpsDocuments, redirect_uri: ClientRedirectUri, name: str
) -> OAuthClient:
    """A client that publishes itself as "Claude" at an https URL, its client_id."""
    path = f"/clients/{name}.json"
    client_id = documents.url(path)
    documents.serve_json(
        path,
        {
            "client_id": client_id,
            "client_name": "Claude",
            "redirect_uris": [redirect_uri.url],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    return OAuthClient(service, TENANT, client_id, redirect_uri.url)


def account_url(service: LiveService) -> str:
    return f"{service.base_url}/v1/{TENANT}/account"


def provenance_look(page: Page) -> tuple[str, str]:
    """How the box saying who the client is looks: its border style and its mark."""
    box = page.locator(".provenance")
    expect(box).to_have_count(1)
    mark = box.locator(".mark")
    expect(mark).to_be_visible()
    style: str = box.evaluate("b => getComputedStyle(b).borderTopStyle")
    return style, mark.inner_text()


@pytest.mark.parametrize("width", ALL_WIDTHS)
def test_a_long_client_name_wraps_and_allow_stays_on_screen(
    browser: Browser,
    contexts: list[BrowserContext],
    service: LiveService,
    redirect_uri: ClientRedirectUri,
    width: int,
) -> None:
    client = registered(service, redirect_uri, LONG_NAME)
    page = open_page(browser, contexts, width)
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text))
    page.goto(client.authorization().url)

    expect(page.get_by_role("heading", level=1)).to_contain_text(LONG_NAME)
    assert_no_sideways_scroll(page)
    allow = page.get_by_role("button", name="Allow")
    allow.scroll_into_view_if_needed()
    expect(allow).to_be_in_viewport(ratio=1)
    box = allow.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= width
    # The logo came from its https origin: the policy allowed it, and refused nothing else.
    logo = page.get_by_role("img", name=COMPANY)
    expect(logo).to_be_visible()
    assert logo.evaluate("image => image.complete && image.naturalWidth > 0")
    assert [text for text in refused if "Content Security Policy" in text] == []
    page.screenshot(path=artifact(f"consent-long-name-{width}.png"), full_page=True)


@pytest.mark.parametrize("width", ALL_WIDTHS)
def test_the_consent_page_is_branded_marks_a_registered_client_and_is_accessible(
    browser: Browser,
    contexts: list[BrowserContext],
    service: LiveService,
    redirect_uri: ClientRedirectUri,
    axe: Path,
    width: int,
) -> None:
    client = registered(service, redirect_uri, "Claude")
    page = open_page(browser, contexts, width, bypass_csp=True)
    page.goto(client.authorization().url)

    expect(page).to_have_title(f"Allow Claude? · {COMPANY}")
    expect(page.get_by_role("img", name=COMPANY)).to_be_visible()
    expect(page.get_by_role("link", name="Privacy policy")).to_have_attribute(
        "href", "https://roasters.example/privacy"
    )
    expect(page.get_by_role("link", name="Terms of service")).to_be_visible()
    expect(page.get_by_role("link", name="Help: help@roasters.example")).to_have_attribute(
        "href", "mailto:help@roasters.example"
    )
    expect(page.get_by_text("this app's name was chosen by whoever registered it")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^verified:"))).to_have_count(0)
    assert provenance_look(page) == ("dashed", "!")
    # The personal tools by title; the one that may destroy is marked in words, a sign and
    # a border, not by colour alone.
    # By name, as tools/list orders them.
    expect(page.locator("ul.tools > li")).to_have_text([f"Cancel my order {MARKED}", "Who I am"])
    badge = page.locator("ul.tools .badge")
    expect(badge).to_have_count(1)
    assert badge.evaluate("b => getComputedStyle(b).borderTopStyle") == "solid"
    expect(page.get_by_role("link", name=f"your {COMPANY} account page")).to_have_attribute(
        "href", account_url(service)
    )
    allow = page.get_by_role("button", name="Allow")
    # Yellow accent, black text: readable (axe-core checks the contrast below).
    assert allow.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(255, 213, 0)"
    assert allow.evaluate("b => getComputedStyle(b).color") == "rgb(0, 0, 0)"
    assert_no_sideways_scroll(page)

    # Keyboard: Tab reaches Deny then Allow, each with a visible focus ring.
    focused: list[str] = []
    for _ in range(8):
        page.keyboard.press("Tab")
        focused.append(page.evaluate("() => document.activeElement.textContent.trim()"))
        if focused[-1] == "Allow":
            break
    assert focused[-2:] == ["Deny", "Allow"], focused
    outline = allow.evaluate(
        "b => getComputedStyle(b).outlineStyle + ' ' + getComputedStyle(b).outlineWidth"
    )
    assert outline == "solid 3px"
    page.screenshot(path=artifact(f"consent-branded-{width}.png"), full_page=True)
    assert_accessible(page, axe, f"consent page at {width}px")


@pytest.mark.parametrize("width", ALL_WIDTHS)
def test_a_metadata_document_client_leads_with_its_verified_host(
    browser: Browser,
    contexts: list[BrowserContext],
    service: LiveService,
    documents: HttpsDocuments,
    redirect_uri: ClientRedirectUri,
    axe: Path,
    width: int,
) -> None:
    """The host that answered for its id comes first; "Claude", its own choice, second."""
    client = document_client(service, documents, redirect_uri, f"assistant-{width}")
    page = open_page(browser, contexts, width, bypass_csp=True)
    page.goto(client.authorization().url)

    host = urlsplit(documents.base_url).hostname
    expect(page).to_have_title(f"Allow {host}? · {COMPANY}")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Allow {host} to use your {COMPANY} account?"
    )
    expect(page.get_by_text(f"Verified: {host}")).to_be_visible()
    expect(page.get_by_text("It calls itself Claude: a name it chose")).to_be_visible()
    expect(page.get_by_text("is not verified")).to_have_count(0)
    assert provenance_look(page) == ("solid", "\u2713")
    expect(page.locator("ul.tools > li")).to_have_count(2)
    assert_no_sideways_scroll(page)
    page.screenshot(path=artifact(f"consent-verified-{width}.png"), full_page=True)
    assert_accessible(page, axe, f"consent page of a verified client at {width}px")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_second_sign_in_with_the_same_scopes_skips_consent(
    browser: Browser,
    contexts: list[BrowserContext],
    service: LiveService,
    redirect_uri: ClientRedirectUri,
    axe: Path,
    width: int,
) -> None:
    """Allow once; the next sign-in goes straight to the login; the login page is accessible."""
    client = registered(service, redirect_uri, "Browser Test Assistant")
    page = open_page(browser, contexts, width, bypass_csp=True)

    first = client.authorization()
    page.goto(first.url)
    page.get_by_role("button", name="Allow").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Sign in to {COMPANY}")
    assert_no_sideways_scroll(page)
    page.screenshot(path=artifact(f"login-{width}.png"), full_page=True)
    assert_accessible(page, axe, f"login page at {width}px")
    sign_in(page, client)
    assert redirect_uri.next_redirect().query["state"] == first.state

    second = client.authorization()
    page.goto(second.url)
    # No consent page: the login comes first.
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Sign in to {COMPANY}")
    expect(page.get_by_role("button", name="Allow")).to_have_count(0)
    sign_in(page, client)
    arrived = redirect_uri.next_redirect()
    assert arrived.query["state"] == second.state
    tokens = client.exchange(arrived.query["code"], second.verifier)
    assert tokens["scope"] == "profile email"

    # Fewer scopes than allowed are not asked either.
    page.goto(client.authorization(scope="email").url)
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Sign in to {COMPANY}")


def sign_in(page: Page, client: OAuthClient, email: str = "grace@roasters.example") -> None:
    page.get_by_label("Email").fill(email)
    page.get_by_label("Name").fill("Grace Brewster")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(rf"^{re.escape(client.redirect_uri)}\?"))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_error_page_is_branded_and_accessible(
    browser: Browser,
    contexts: list[BrowserContext],
    service: LiveService,
    axe: Path,
    width: int,
) -> None:
    page = open_page(browser, contexts, width, bypass_csp=True)
    page.goto(f"{service.base_url}/v1/{TENANT}/oauth/authorize?client_id=nobody")
    expect(page.get_by_role("heading", level=1)).to_have_text("Unknown application")
    expect(page.get_by_role("img", name=COMPANY)).to_be_visible()
    expect(page.get_by_role("link", name="Help: help@roasters.example")).to_be_visible()
    assert_no_sideways_scroll(page)
    page.screenshot(path=artifact(f"error-{width}.png"), full_page=True)
    assert_accessible(page, axe, f"error page at {width}px")


@pytest.mark.parametrize("width", ALL_WIDTHS)
def test_the_account_page_names_each_client_as_the_consent_page_did(
    browser: Browser,
    contexts: list[BrowserContext],
    service: LiveService,
    documents: HttpsDocuments,
    redirect_uri: ClientRedirectUri,
    axe: Path,
    width: int,
) -> None:
    """Allow a metadata-document client and a registered one, then follow the consent
    page's link to the account page: each is listed by the name its consent page led with,
    verified and unverified told apart as there; the page is accessible at every width."""
    # A customer of this test's own, so the page lists only the clients allowed here.
    email = f"listed-{width}@roasters.example"
    page = open_page(browser, contexts, width, bypass_csp=True)
    clients = [
        document_client(service, documents, redirect_uri, f"listed-{width}"),
        registered(service, redirect_uri, f"Listed Assistant {width}"),
    ]
    consented: list[tuple[str, tuple[str, str]]] = []
    link = ""
    for client in clients:
        authorization = client.authorization()
        page.goto(authorization.url)
        name = page.locator("h1 .client-name").inner_text()
        consented.append((name, provenance_look(page)))
        link = (
            page.get_by_role("link", name=f"your {COMPANY} account page").get_attribute("href")
            or ""
        )
        page.get_by_role("button", name="Allow").click()
        sign_in(page, client, email)
        arrived = redirect_uri.next_redirect()
        client.exchange(arrived.query["code"], authorization.verifier)
    host = urlsplit(documents.base_url).hostname
    assert [name for name, _ in consented] == [host, f"Listed Assistant {width}"]

    page.goto(link)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(account_url(service))

    expect(page.get_by_role("heading", level=2)).to_have_count(len(consented))
    for name, look in consented:
        entry = page.locator("li.client", has=page.get_by_role("heading", level=2, name=name))
        expect(entry).to_have_count(1)
        box = entry.locator(".provenance")
        assert (
            box.evaluate("b => getComputedStyle(b).borderTopStyle"),
            box.locator(".mark").inner_text(),
        ) == look
    listed_by_host = page.locator("li.client", has=page.get_by_role("heading", name=host))
    expect(listed_by_host.locator(".calls-itself")).to_have_text("Claude")
    assert_no_sideways_scroll(page)
    page.screenshot(path=artifact(f"account-named-alike-{width}.png"), full_page=True)
    assert_accessible(page, axe, f"account page at {width}px")
