"""Per-tool scopes end to end: the MCP Python SDK signs a customer in through Chromium (the
consent page shows each tool scope ticked), calls both order tools, then the customer
unticks ``orders:cancel`` on their account page; the client's next read still answers and
its next cancel gets the step-up challenge naming ``orders:cancel``. Both pages pass axe-core.

The SDK runs in a thread of its own with its own event loop, Playwright's synchronous API in
the test's: the SDK's redirect handler hands the authorize URL to the browser, and the
browser hands back what arrived at the client's loopback redirect URI.
"""

from __future__ import annotations

import asyncio
import queue
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from playwright.sync_api import Browser, BrowserContext, Page, expect
from pydantic import AnyUrl

from tests.browser.conftest import ClientRedirectUri, artifact
from tests.browser.test_consent_page import AXE, HERE, assert_accessible, new_context
from tests.live.conftest import LiveService, running_service
from tests.live.test_signin_sdk import MemoryStorage
from tests.support.npm import ensure_installed

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "bistro"
COMPANY = "Corner Bistro"
CLIENT_NAME = "Orders Assistant"
EMAIL = "joanna@bistro.example"
# How long one side waits for the other (a sign-in, a narrowing) before the test fails.
HANDOVER_SECONDS = 60.0
READ, CANCEL = "orders:read", "orders:cancel"


def companies_file(directory: Path) -> Path:
    path = directory / "bistro.yaml"
    path.write_text(
        f"""
companies:
  - tenant_key: {TENANT}
    name: {COMPANY}
    signin:
      login: {{type: dev}}
    tools:
      - name: order_status
        description: Reads the customer's orders.
        access: personal
        scope: {READ}
        annotations:
          {{title: My orders, readOnlyHint: true, destructiveHint: false, idempotentHint: true,
          openWorldHint: false}}
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
      - name: cancel_order
        description: Cancels one of the customer's orders.
        access: personal
        scope: {CANCEL}
        annotations:
          {{title: Cancel my order, readOnlyHint: false, destructiveHint: true,
          idempotentHint: true, openWorldHint: false}}
        provider: {{type: python, target: "tests.fixtures.tools:whoami"}}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def bistro(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    workdir = tmp_path_factory.mktemp("tool-scopes")
    with running_service(
        "sqlite",
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        workdir,
        extra_companies_files=[companies_file(workdir)],
    ) as service:
        yield service


@pytest.fixture(scope="module")
def axe() -> Path:
    ensure_installed(HERE)
    return AXE


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A phone-wide page that may take axe-core's inline script."""
    context: BrowserContext = new_context(browser, 390, bypass_csp=True)
    try:
        yield context.new_page()
    finally:
        context.close()


class StepUpAsked(Exception):
    """The SDK asked to sign the customer in again: where the client stops."""


@dataclass
class Assistant:
    """The SDK's side, run in its own thread: what it was asked to open and what it saw."""

    url: str
    redirect_uri: str
    to_browser: queue.Queue[str] = field(default_factory=queue.Queue)
    from_browser: queue.Queue[dict[str, str]] = field(default_factory=queue.Queue)
    narrowed: threading.Event = field(default_factory=threading.Event)
    signed_in: threading.Event = field(default_factory=threading.Event)
    results: dict[str, Any] = field(default_factory=dict)
    refusals: list[tuple[int, str, Any]] = field(default_factory=list)
    asked_again: list[str] = field(default_factory=list)
    failure: BaseException | None = None

    async def _open(self, authorize_url: str) -> None:
        if self.signed_in.is_set():
            # The step-up: the client would send the customer to sign in again.
            self.asked_again.append(authorize_url)
            raise StepUpAsked(authorize_url)
        self.to_browser.put(authorize_url)

    async def _callback(self) -> AuthorizationCodeResult:
        params = await asyncio.to_thread(self.from_browser.get, True, HANDOVER_SECONDS)
        return AuthorizationCodeResult(
            code=params["code"], state=params.get("state"), iss=params.get("iss")
        )

    async def _seen(self, response: httpx2.Response) -> None:
        if response.status_code == 401 and "insufficient_scope" in response.headers.get(
            "www-authenticate", ""
        ):
            await response.aread()
            self.refusals.append(
                (response.status_code, response.headers["www-authenticate"], response.json())
            )

    async def _walk(self) -> None:
        provider = OAuthClientProvider(
            self.url,
            OAuthClientMetadata(redirect_uris=[AnyUrl(self.redirect_uri)], client_name=CLIENT_NAME),
            MemoryStorage(),
            redirect_handler=self._open,
            callback_handler=self._callback,
        )
        async with (
            httpx2.AsyncClient(
                auth=provider, timeout=30.0, event_hooks={"response": [self._seen]}
            ) as http,
            Client(streamable_http_client(self.url, http_client=http)) as client,
        ):
            self.results["read"] = await client.call_tool("order_status", {})
            self.results["cancel"] = await client.call_tool("cancel_order", {})
            self.signed_in.set()
            assert await asyncio.to_thread(self.narrowed.wait, HANDOVER_SECONDS)
            self.results["read_after"] = await client.call_tool("order_status", {})
            try:
                self.results["cancel_after"] = await client.call_tool("cancel_order", {})
            except BaseException as error:  # the SDK's wrapping of StepUpAsked, whatever it is
                self.results["cancel_after"] = error

    def run(self) -> None:
        try:
            asyncio.run(self._walk())
        except BaseException as error:
            if not self.asked_again:
                self.failure = error


def allow_on_consent_page(page: Page, axe: Path, authorize_url: str) -> None:
    page.goto(authorize_url)
    expect(page.get_by_role("heading", level=1)).to_contain_text(CLIENT_NAME)
    read = page.get_by_label(f"My orders {READ}")
    cancel = page.get_by_label(f"Cancel my order {CANCEL}")
    expect(read).to_be_checked()
    expect(cancel).to_be_checked()
    assert_accessible(page, axe, "consent page with tool scopes")
    page.screenshot(path=artifact("consent-tool-scopes-390.png"), full_page=True)
    page.get_by_role("button", name="Allow").click()
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_role("button", name="Sign in").click()


def untick_cancel_on_account_page(page: Page, axe: Path, service: LiveService) -> None:
    account = f"{service.base_url}/v1/{TENANT}/account"
    page.goto(account)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(account)
    expect(page.get_by_role("heading", level=2)).to_have_text([CLIENT_NAME])
    cancel = page.get_by_label(f"Cancel my order {CANCEL}")
    expect(cancel).to_be_checked()
    assert_accessible(page, axe, "account page with tool scopes")
    cancel.uncheck()
    page.get_by_role("button", name=f"Save what {CLIENT_NAME} may do").click()
    page.wait_for_url(account)
    expect(page.get_by_label(f"Cancel my order {CANCEL}")).to_have_count(0)
    expect(page.get_by_label(f"My orders {READ}")).to_be_checked()
    page.screenshot(path=artifact("account-narrowed-390.png"), full_page=True)


def test_a_customer_unticks_a_scope_and_the_client_is_asked_to_step_up(
    page: Page, bistro: LiveService, redirect_uri: ClientRedirectUri, axe: Path
) -> None:
    assistant = Assistant(bistro.mcp_url(TENANT), redirect_uri.url)
    thread = threading.Thread(target=assistant.run, name="mcp-sdk-client")
    thread.start()
    try:
        authorize_url = assistant.to_browser.get(timeout=HANDOVER_SECONDS)
        asked = parse_qs(urlsplit(authorize_url).query)["scope"][0].split()
        assert {READ, CANCEL} <= set(asked)
        allow_on_consent_page(page, axe, authorize_url)
        page.wait_for_url(re.compile(rf"^{re.escape(redirect_uri.url)}\?"))
        assistant.from_browser.put(redirect_uri.next_redirect().query)
        assert assistant.signed_in.wait(HANDOVER_SECONDS), assistant.failure

        untick_cancel_on_account_page(page, axe, bistro)
        assistant.narrowed.set()
    finally:
        assistant.narrowed.set()
        thread.join(HANDOVER_SECONDS)
    assert not thread.is_alive()
    assert assistant.failure is None, repr(assistant.failure)

    for name in ("read", "cancel", "read_after"):
        result = assistant.results[name]
        assert result.is_error is False, (name, result)
    assert sorted(assistant.results["read_after"].structured_content["scopes"]) == [
        "email",
        READ,
        "profile",
    ]
    # The cancel after the narrowing: a 401 whose challenge, in the header and in the
    # result's _meta alike, asks for orders:cancel; the SDK then wants the customer again.
    [(status, challenge, body)] = assistant.refusals
    assert status == 401
    assert 'error="insufficient_scope"' in challenge
    assert f"This tool needs the scope {CANCEL}" in challenge
    scope = re.search(r'scope="([^"]+)"', challenge)
    assert scope is not None
    assert scope.group(1).split() == ["profile", "email", READ, CANCEL]
    assert body["result"]["_meta"]["mcp/www_authenticate"] == [challenge]
    [again] = assistant.asked_again
    assert CANCEL in parse_qs(urlsplit(again).query)["scope"][0].split()
