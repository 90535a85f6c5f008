"""POST /admin/v1/companies/{tenantKey}/openapi-imports: a company's tools from an OpenAPI
document given inline or by URL, the diff answered, applied unless a dry run, and served
at once; a document that cannot be imported is a 422 saying why, with nothing written."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from tests.admin_api.conftest import MakeKey, admin
from tests.support.orders_api import ORDERS_31, OrdersApi, serve_orders_api
from tests.tools.backends import post_mcp

pytestmark = [pytest.mark.anyio]

IMPORTS = "/companies/orderly/openapi-imports"
BASE_URL = "https://api.acme.example/v1"
EVERY_OPERATION = ["listOrders", "place_order", "getOrder", "cancelOrder", "broken"]


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    # Documents by URL from the loopback orders API; every change served at once.
    return make_settings(company_cache_seconds=0, client_documents_on_loopback=True)


@pytest.fixture
def api() -> Iterator[OrdersApi]:
    with serve_orders_api() as started:
        yield started


async def create_orderly(client: httpx.AsyncClient, key: str) -> None:
    company = {"name": "Acme", "signin": {"login": {"type": "dev"}}}
    created = await admin(client, "PUT", "/companies/orderly", key, json=company)
    assert created.status_code == 201, created.text


async def served_tools(client: httpx.AsyncClient) -> list[str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    listed = await post_mcp(client, "orderly", body)
    assert listed.status_code == 200, listed.text
    return [tool["name"] for tool in listed.json()["result"]["tools"]]


async def test_a_dry_run_answers_the_diff_and_the_import_applies_it(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str
) -> None:
    await create_orderly(client, operator_key)
    request: dict[str, Any] = {"document": ORDERS_31, "base_url": BASE_URL, "dry_run": True}

    dry = await admin(client, "POST", IMPORTS, operator_key, json=request)
    assert dry.status_code == 200, dry.text
    assert dry.json() == {
        "tenant_key": "orderly",
        "source": "Orders API",
        "added": EVERY_OPERATION,
        "changed": [],
        "removed": [],
        "unchanged": [],
        "applied": False,
    }
    assert await served_tools(client) == []

    applied = await admin(client, "POST", IMPORTS, operator_key, json={**request, "dry_run": False})
    assert applied.status_code == 200, applied.text
    assert applied.json()["applied"] is True
    # Served by name (tools/list's stable order), whatever the document's order.
    assert await served_tools(client) == sorted(EVERY_OPERATION)
    tools = await admin(client, "GET", "/companies/orderly/tools", operator_key)
    assert [tool["provider"]["type"] for tool in tools.json()["tools"]] == ["openapi"] * 5


async def test_a_company_key_imports_by_url_into_its_own_company_only(
    app: Frontdesk,
    client: httpx.AsyncClient,
    operator_key: str,
    make_key: MakeKey,
    api: OrdersApi,
) -> None:
    await create_orderly(client, operator_key)
    orderly_key = await make_key("orderly")
    request = {"url": f"{api.base_url}/openapi.json", "base_url": api.base_url}
    imported = await admin(
        client, "POST", IMPORTS, orderly_key, json={**request, "include": ["orders"]}
    )
    assert imported.status_code == 200, imported.text
    assert imported.json()["added"] == ["listOrders", "place_order"]
    assert await served_tools(client) == ["listOrders", "place_order"]

    other_key = await make_key("globex")
    refused = await admin(client, "POST", IMPORTS, other_key, json=request)
    assert refused.status_code == 404
    assert refused.json()["error"] == "not_found"


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        ({"base_url": BASE_URL}, 'give exactly one of "document" (an object) or "url"'),
        ({"document": ORDERS_31}, '"base_url" (where the API is served) is required'),
        ({"document": ORDERS_31, "base_url": BASE_URL, "dry_run": "yes"}, '"dry_run" is true'),
        ({"document": ORDERS_31, "base_url": BASE_URL, "extra": 1}, "unknown fields ['extra']"),
    ],
)
async def test_a_malformed_request_is_a_400_naming_the_field(
    app: Frontdesk,
    client: httpx.AsyncClient,
    operator_key: str,
    request_body: dict[str, Any],
    message: str,
) -> None:
    await create_orderly(client, operator_key)
    refused = await admin(client, "POST", IMPORTS, operator_key, json=request_body)
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_request"
    assert message in refused.json()["error_description"]


async def test_a_document_that_cannot_be_imported_is_a_422_and_nothing_is_written(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str, api: OrdersApi
) -> None:
    await create_orderly(client, operator_key)
    invalid = copy.deepcopy(ORDERS_31)
    del invalid["info"]["version"]
    refused = await admin(
        client, "POST", IMPORTS, operator_key, json={"document": invalid, "base_url": BASE_URL}
    )
    assert refused.status_code == 422
    assert refused.json() == {
        "error": "invalid_document",
        "error_description": 'the document is not valid OpenAPI 3.1: at info: "version" is a'
        " required property",
    }
    missing = await admin(
        client,
        "POST",
        IMPORTS,
        operator_key,
        json={"url": f"{api.base_url}/nothing-here.json", "base_url": BASE_URL},
    )
    assert missing.status_code == 422
    assert missing.json()["error_description"] == (
        f"cannot fetch the document: {api.base_url}/nothing-here.json answered HTTP 404"
    )

    plain_http = await admin(
        client,
        "POST",
        IMPORTS,
        operator_key,
        json={"document": ORDERS_31, "base_url": "http://api.acme.example"},
    )
    assert plain_http.status_code == 422
    assert plain_http.json()["error_description"] == (
        '"base_url" must be https (plain http only to a loopback address, for tests)'
    )
    assert await served_tools(client) == []


async def test_a_body_is_refused_for_its_depth_not_for_its_many_objects(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str
) -> None:
    """A document of many objects side by side is read (the orders document above opens
    more than 64); one nested past 64 levels is a 400 (json_nesting)."""
    await create_orderly(client, operator_key)
    deep: dict[str, Any] = {}
    for _ in range(70):
        deep = {"x": deep}
    refused = await admin(
        client,
        "POST",
        IMPORTS,
        operator_key,
        json={"document": {**ORDERS_31, "x-deep": deep}, "base_url": BASE_URL},
    )
    assert refused.status_code == 400
    assert refused.json()["error_description"] == "the JSON document nests more than 64 levels"
