"""An OpenAPI document as the import reads it: fetched by URL under the metadata documents'
limits (no redirect followed, a cap on its size, https unless the test-only loopback
setting), and parsed from JSON or YAML, a YAML document of shared nodes refused."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from frontdesk.openapi_import import ImportRefused
from frontdesk.openapi_import.document import fetch, parse_text
from frontdesk.outbound.clients import OutboundClients
from tests.support.orders_api import ORDERS_31, OrdersApi, serve_orders_api

pytestmark = pytest.mark.anyio


@pytest.fixture
def api() -> Iterator[OrdersApi]:
    with serve_orders_api() as started:
        yield started


@pytest.fixture
async def outbound() -> AsyncIterator[OutboundClients]:
    clients = OutboundClients()
    try:
        yield clients
    finally:
        await clients.aclose()


async def test_a_document_is_fetched_as_json(api: OrdersApi, outbound: OutboundClients) -> None:
    url = f"{api.base_url}/openapi.json"
    assert await fetch(outbound.for_documents(), url, on_loopback=True) == ORDERS_31


@pytest.mark.parametrize(
    ("path", "on_loopback", "reason"),
    [
        ("/moved.json", True, "answered HTTP 302, a redirect, which is not followed"),
        ("/huge.json", True, "the answer is more than 2097152 bytes"),
        ("/openapi.json", False, "is not an https URL"),
    ],
)
async def test_a_fetch_past_the_limits_is_refused_saying_why(
    api: OrdersApi, outbound: OutboundClients, path: str, on_loopback: bool, reason: str
) -> None:
    with pytest.raises(ImportRefused) as refused:
        await fetch(outbound.for_documents(), api.base_url + path, on_loopback=on_loopback)
    assert str(refused.value).startswith("cannot fetch the document: ")
    assert reason in str(refused.value)


def test_a_yaml_document_of_shared_nodes_is_refused_before_it_is_walked() -> None:
    # Each level names the one below twice: 30 lines, 2**30 nodes once expanded.
    lines = ["a0: &a0 {x: 1}"]
    lines += [f"a{n}: &a{n} [*a{n - 1}, *a{n - 1}]" for n in range(1, 30)]
    with pytest.raises(ImportRefused, match="uses YAML aliases, which are not accepted"):
        parse_text("\n".join(lines), "bomb.yaml")


def test_text_that_is_not_a_document_is_refused_naming_it() -> None:
    with pytest.raises(ImportRefused, match=r"^orders\.yaml is not valid JSON or YAML"):
        parse_text("openapi: [3.1", "orders.yaml")
    with pytest.raises(ImportRefused, match=r"^orders\.yaml is not an OpenAPI document"):
        parse_text("- just\n- a list", "orders.yaml")
