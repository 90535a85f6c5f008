"""The console's OpenAPI import: a pasted document's changes shown first and nothing
written, then applied, after which a client lists the operations as tools and calls one,
which reaches the company's API; a document that cannot be imported is refused, naming
why, with nothing written."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.store.audit import AuditLog
from tests.conftest import BASE_URL, start_app
from tests.console.support import CONSOLE_COMPANIES, console_sign_in, csrf_of, post
from tests.oauth import flows
from tests.support.orders_api import ORDERS_31, OrdersApi, serve_orders_api

pytestmark = pytest.mark.anyio

IMPORTED = ["listOrders", "place_order", "getOrder", "cancelOrder", "broken"]


@pytest.fixture
def api() -> Iterator[OrdersApi]:
    with serve_orders_api() as running:
        yield running


@pytest.fixture
async def console_app(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> AsyncIterator[Frontdesk]:
    # The orders API listens on loopback, where backends may be only when the operator
    # says so.
    app = await start_app(make_settings(backend_allowed_networks=["127.0.0.0/8"]))
    await flows.add_companies(app, tmp_path, CONSOLE_COMPANIES)
    try:
        yield app
    finally:
        await app.services.stop()


@pytest.fixture
async def staff(console_app: Frontdesk) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=console_app, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        await console_sign_in(client, "pendant", "elaine@pendant.example")
        yield client


async def stored_names(app: Frontdesk) -> list[str]:
    stored = await app.services.companies.get("pendant")
    assert stored is not None
    return [tool["name"] for tool in stored.definition["tools"]]


async def test_the_changes_are_shown_then_applied_and_the_tools_called(
    console_app: Frontdesk, staff: httpx.AsyncClient, api: OrdersApi
) -> None:
    page = await staff.get("/console/pendant/import")
    assert page.status_code == 200, page.text
    form = {
        "csrf": csrf_of(page.text),
        "document": json.dumps(ORDERS_31),
        "url": "",
        "base_url": api.base_url,
        "include": "",
    }

    shown = await post(staff, "/console/pendant/import", {**form, "action": "preview"})
    assert shown.status_code == 200, shown.text
    assert "What importing Orders API would change" in shown.text
    assert "Added (5)" in shown.text
    for name in IMPORTED:
        assert f"<li>{name}</li>" in shown.text
    assert "Apply these changes" in shown.text
    assert await stored_names(console_app) == ["echo"]

    applied = await post(staff, "/console/pendant/import", {**form, "action": "apply"})
    assert applied.status_code == 200, applied.text
    assert "Applied: Orders API" in applied.text
    assert await stored_names(console_app) == ["echo", *IMPORTED]

    listed = await flows.mcp(staff, flows.rpc("tools/list"), "pendant")
    # Listed by name (tools/list's stable order), whatever the order they are stored in.
    names = [tool["name"] for tool in listed.json()["result"]["tools"]]
    assert names == sorted(["echo", *IMPORTED])
    api.orders["A-1"] = {"id": "A-1", "status": "open", "item": "latex", "quantity": 2}
    called = await flows.mcp(staff, flows.tool_call("listOrders", {"status": "open"}), "pendant")
    result = called.json()["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["orders"][0]["item"] == "latex"
    assert [(method, target) for method, target, _, _ in api.received] == [
        ("GET", "/orders?status=open")
    ]

    events = await AuditLog(console_app.services.database.engine).list("pendant")
    assert [(event.event, event.detail) for event in events] == [
        (
            "console_change",
            {
                "by": "elaine@pendant.example",
                "change": "openapi_imported",
                "source": "Orders API",
                "added": IMPORTED,
                "changed": [],
                "removed": [],
            },
        )
    ]

    # The same document again: nothing to apply.
    again = await post(staff, "/console/pendant/import", {**form, "action": "preview"})
    assert "Unchanged (5)" in again.text
    assert "Apply these changes" not in again.text


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        pytest.param(
            {"document": json.dumps({"openapi": "3.1.0", "info": {"title": "x"}, "paths": 7})},
            "Not imported:",
            id="invalid-document",
        ),
        pytest.param({"document": "{not json: [", "base_url": ""}, "base URL", id="no-base-url"),
        pytest.param(
            {"document": json.dumps(ORDERS_31), "url": "https://api.example/openapi.json"},
            "one of them",
            id="document-and-url",
        ),
    ],
)
async def test_a_document_that_cannot_be_imported_is_refused(
    console_app: Frontdesk, staff: httpx.AsyncClient, fields: dict[str, str], problem: str
) -> None:
    csrf = csrf_of((await staff.get("/console/pendant/import")).text)
    form = {"csrf": csrf, "url": "", "base_url": "https://api.example", "action": "apply"}
    refused = await post(staff, "/console/pendant/import", {**form, **fields})
    assert refused.status_code == 400, refused.text
    assert problem in refused.text
    assert await stored_names(console_app) == ["echo"]


async def test_staff_of_another_company_cannot_import_into_it(
    console_app: Frontdesk, staff: httpx.AsyncClient
) -> None:
    csrf = csrf_of((await staff.get("/console/pendant/import")).text)
    form = {"csrf": csrf, "document": json.dumps(ORDERS_31), "base_url": "https://x.example"}
    assert (await staff.get("/console/vandelay/import")).status_code == 404
    refused = await post(staff, "/console/vandelay/import", {**form, "action": "apply"})
    assert refused.status_code == 404
