"""A new company, from nothing to a tool its customers' assistants call, the way a company
would do it: the operator creates it with the admin API and an operator key made by
`frontdesk keys create`; its staff member signs in to the console in Chromium, pastes the
company API's OpenAPI 3.1 document, sees the tools it would add, applies them; and a real
MCP client (the Python SDK) lists the tools and calls one as a guest, which reaches the
company's API. Screenshots of the import's changes are kept in test-artifacts/."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from playwright.sync_api import Browser, BrowserContext, expect

from tests.browser.conftest import artifact, require_chromium
from tests.browser.oauth_client import TIMEOUT
from tests.browser.test_consent_page import (
    AXE,
    HERE,
    assert_accessible,
    assert_no_sideways_scroll,
    open_page,
)
from tests.live.conftest import LiveService, running_service, service_environment
from tests.support.npm import ensure_installed
from tests.support.orders_api import ORDERS_31, OrdersApi, serve_orders_api

pytestmark = [pytest.mark.browser, pytest.mark.live]

TENANT = "newco"
COMPANY = "Newco Orders"
STAFF = "dana@newco.example"
IMPORTED = ["listOrders", "place_order", "getOrder", "cancelOrder", "broken"]


@pytest.fixture(scope="module")
def api() -> Iterator[OrdersApi]:
    with serve_orders_api() as running:
        yield running


@pytest.fixture(scope="module")
def walk_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, Path]]:
    require_chromium()
    workdir = tmp_path_factory.mktemp("browser-console-walk")
    with running_service(
        "sqlite",
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        workdir,
        # The company's API listens on loopback, open to backends only when the operator
        # says so.
        extra_env={"FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.0/8"},
    ) as service:
        yield service, workdir


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


def operator_key(service: LiveService, workdir: Path) -> str:
    """`frontdesk keys create --operator`, against the database the service uses."""
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    made = subprocess.run(
        [str(Path(sys.executable).with_name("frontdesk")), "keys", "create", "--operator"],
        env=service_environment(service.public_url, database_url),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()[-1]


async def guest_calls(service: LiveService, tenant: str) -> tuple[list[str], dict[str, object]]:
    """What the Python SDK, as a guest, lists, and what listOrders answers."""
    async with Client(service.mcp_url(tenant)) as client:
        listed = await client.list_tools()
        result = await client.call_tool("listOrders", {"status": "open"})
    assert result.is_error is False, result
    assert result.structured_content is not None
    return [tool.name for tool in listed.tools], result.structured_content


@pytest.mark.parametrize("width", [390, 1280])
def test_a_new_company_imports_its_api_in_the_console_and_an_assistant_calls_it(
    browser: Browser,
    contexts: list[BrowserContext],
    walk_service: tuple[LiveService, Path],
    api: OrdersApi,
    axe: Path,
    width: int,
) -> None:
    service, workdir = walk_service
    tenant = f"{TENANT}-{width}"
    created = httpx.put(
        f"{service.base_url}/admin/v1/companies/{tenant}",
        headers={"Authorization": f"Bearer {operator_key(service, workdir)}"},
        json={
            "name": COMPANY,
            "console": {"login": {"type": "dev"}, "staff": {"domains": ["newco.example"]}},
        },
        timeout=TIMEOUT,
    )
    assert created.status_code == 201, created.text

    page = open_page(browser, contexts, width, bypass_csp=True)
    page.goto(f"{service.base_url}/console/")
    page.get_by_label("Your company's key").fill(tenant)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_label("Email").fill(STAFF)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{service.base_url}/console/{tenant}/tools")
    expect(page.get_by_text("This company has no tools yet.")).to_be_visible()

    page.get_by_role("link", name="OpenAPI import").click()
    page.get_by_label("The document (OpenAPI 3.0 or 3.1, JSON or YAML)").fill(
        json.dumps(ORDERS_31, indent=2)
    )
    page.get_by_label("Base URL of the API").fill(api.base_url)
    page.get_by_role("button", name="Show the changes").click()
    expect(page.get_by_role("heading", level=2).first).to_have_text(
        "What importing Orders API would change"
    )
    expect(page.locator("ul.added li")).to_have_text(IMPORTED)
    assert_no_sideways_scroll(page)
    assert_accessible(page, axe, "console import changes")
    page.screenshot(path=artifact(f"console-import-{width}.png"), full_page=True)

    page.get_by_role("button", name="Apply these changes").click()
    expect(page.get_by_role("heading", level=2).first).to_have_text("Applied: Orders API")
    page.get_by_role("link", name="See the tools").click()
    expect(page.get_by_role("listitem").filter(has_text="listOrders")).to_contain_text("read-only")

    api.orders["A-1"] = {"id": "A-1", "status": "open", "item": "stapler", "quantity": 1}
    # In a thread of its own: Playwright's sync API holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        names, answer = pool.submit(anyio.run, guest_calls, service, tenant).result(TIMEOUT)
    # tools/list is ordered by name (tool change control).
    assert names == sorted(IMPORTED)
    assert answer["orders"] == [api.orders["A-1"]]
