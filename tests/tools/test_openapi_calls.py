"""A tool imported from an OpenAPI document, called: each call is the operation's own HTTP
request to the company's API (a real one on loopback, tests.support.orders_api), its JSON
answer the tool's structured content, its 4xx and 5xx isError results with the API's own
message, and a signed-in customer's call a JWT the API verifies against the company's
published keys (tools/openapi.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from frontdesk.openapi_import.plan import ImportRequest, imported_tools
from tests.conftest import BASE_URL
from tests.oauth import flows
from tests.support.orders_api import ORDERS_31, OrdersApi, serve_orders_api
from tests.tools.backends import call_tool, company, post_mcp, rpc_call, text_of
from tests.tools.conftest import Serve, Served

pytestmark = pytest.mark.anyio


@pytest.fixture
def api() -> Iterator[OrdersApi]:
    with serve_orders_api() as started:
        yield started


async def serve_orders(serve: Serve, api: OrdersApi) -> Served:
    """Frontdesk serving the company ``acme`` with every operation of the orders API."""
    tools, _ = imported_tools(ImportRequest(ORDERS_31, api.base_url))
    return await serve(company("acme", *tools, signin=True))


async def test_a_guest_call_is_the_operations_request_and_its_json_the_result(
    serve: Serve, api: OrdersApi
) -> None:
    api.orders["A-1"] = {"id": "A-1", "item": "anvil", "quantity": 1, "status": "open"}
    served = await serve_orders(serve, api)
    result = await call_tool(
        served.client,
        "acme",
        "listOrders",
        {"status": "open", "limit": 5, "X-Request-Id": "req 7"},
    )
    expected = {"orders": [api.orders["A-1"]], "request_id": "req 7"}
    assert result["isError"] is False
    assert result["structuredContent"] == expected
    assert json.loads(text_of(result)) == expected
    [(method, target, headers, body)] = api.received
    assert (method, target, body) == ("GET", "/orders?status=open&limit=5", b"")
    assert headers["x-request-id"] == "req 7"
    # A guest's call says nothing about who is calling.
    assert "authorization" not in headers


async def test_the_body_argument_is_sent_as_json(serve: Serve, api: OrdersApi) -> None:
    served = await serve_orders(serve, api)
    placed = {"item": "anvil", "quantity": 2, "note": None}
    result = await call_tool(served.client, "acme", "place_order", {"body": placed})
    assert result["isError"] is False
    assert result["structuredContent"] == {"id": "A-1", "status": "open", **placed}
    [(method, target, headers, body)] = api.received
    assert (method, target) == ("POST", "/orders")
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == placed


@pytest.mark.parametrize(
    ("order_id", "sent"),
    [("A/1", "/orders/A%2F1"), ("..", "/orders/%2E%2E"), ("a b?c#d", "/orders/a%20b%3Fc%23d")],
)
async def test_a_path_argument_cannot_leave_its_segment(
    serve: Serve, api: OrdersApi, order_id: str, sent: str
) -> None:
    """Percent-encoded whole: a slash, a dot segment, a query or a fragment in the argument
    stays in the one path segment (RFC 3986 3.3); the API's 404 problem+json (RFC 9457) is
    an isError result carrying its title and detail."""
    served = await serve_orders(serve, api)
    result = await call_tool(served.client, "acme", "getOrder", {"orderId": order_id})
    [(_, target, _, _)] = api.received
    assert target == sent
    assert result["isError"] is True
    assert text_of(result) == f"getOrder failed (HTTP 404): Not Found no order {order_id}"


async def test_the_apis_4xx_message_reaches_the_caller(serve: Serve, api: OrdersApi) -> None:
    served = await serve_orders(serve, api)
    result = await call_tool(
        served.client, "acme", "place_order", {"body": {"item": "anvil", "quantity": 11}}
    )
    assert result["isError"] is True
    assert text_of(result) == "place_order failed (HTTP 422): at most 10 of an item per order"
    assert "structuredContent" not in result


async def test_a_5xx_text_answer_is_one_printable_line(serve: Serve, api: OrdersApi) -> None:
    served = await serve_orders(serve, api)
    result = await call_tool(served.client, "acme", "broken")
    assert result["isError"] is True
    assert text_of(result) == "broken failed (HTTP 500): database unavailable retry later"


async def test_a_guest_never_reaches_a_personal_operation(serve: Serve, api: OrdersApi) -> None:
    """Refused by Frontdesk with its sign-in challenge (protocol.tool_calls): the API is
    never asked."""
    served = await serve_orders(serve, api)
    response = await post_mcp(served.client, "acme", rpc_call("cancelOrder", {"orderId": "A-1"}))
    result = response.json()["result"]
    assert result["isError"] is True
    assert text_of(result) == "Sign in to Acme to use cancelOrder."
    assert api.received == []


async def test_a_signed_in_call_carries_a_jwt_the_api_verifies_with_the_published_keys(
    serve: Serve, api: OrdersApi
) -> None:
    api.orders["A-1"] = {"id": "A-1", "item": "anvil", "quantity": 1, "status": "open"}
    served = await serve_orders(serve, api)
    tokens = await flows.obtain_tokens(served.client, "acme", email="ada@acme.example")
    metadata = await served.client.get("/.well-known/oauth-authorization-server/v1/acme/oauth")
    assert metadata.status_code == 200, metadata.text
    keys = await served.client.get(metadata.json()["jwks_uri"].removeprefix(BASE_URL))
    api.jwks, api.audience = keys.json(), api.base_url

    result = await call_tool(
        served.client, "acme", "cancelOrder", {"orderId": "A-1"}, token=tokens.access
    )
    assert result["isError"] is False, result
    assert text_of(result) == "cancelOrder succeeded (HTTP 204)."
    assert api.orders["A-1"]["status"] == "cancelled"
    [claims] = api.verified_claims
    expected: dict[str, Any] = {
        "iss": metadata.json()["issuer"],
        "aud": api.base_url,
        "sub": "dev:ada@acme.example",
        "client_id": tokens.client_id,
        "email": "ada@acme.example",
    }
    assert {name: claims.get(name) for name in expected} == expected
    assert claims["exp"] - claims["iat"] <= 300


async def test_an_api_on_an_address_not_allowed_is_never_called(
    serve: Serve, api: OrdersApi
) -> None:
    """Loopback is not a backend network unless the operator opens it (addresses)."""
    tools, _ = imported_tools(ImportRequest(ORDERS_31, api.base_url, include=("getOrder",)))
    served = await serve(company("acme", *tools), backend_allowed_networks=[])
    result = await call_tool(served.client, "acme", "getOrder", {"orderId": "A-1"})
    assert result["isError"] is True
    assert text_of(result) == "getOrder is unavailable right now."
    assert api.received == []


async def test_an_api_that_is_not_there_is_an_error_result(serve: Serve) -> None:
    with serve_orders_api() as gone:
        base_url = gone.base_url
    tools, _ = imported_tools(ImportRequest(ORDERS_31, base_url, include=("getOrder",)))
    served = await serve(company("acme", *tools))
    result = await call_tool(served.client, "acme", "getOrder", {"orderId": "A-1"})
    assert result["isError"] is True
    assert text_of(result) == "getOrder could not reach its service; try again later."
