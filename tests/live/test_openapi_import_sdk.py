"""The walk a company takes with its own REST API: `frontdesk tools import-openapi` makes
its operations tools of a running service, and the MCP Python SDK's own client lists them
and calls one as a guest, which reaches the API (tests.support.orders_api) over loopback;
then, signed in through the SDK's OAuth client, it calls a personal one, whose API checks
the JWT against the company's jwks_uri with PyJWT."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
import yaml
from mcp import Client

from tests.live.conftest import running_service, service_environment
from tests.live.customer_browser import EMAIL
from tests.live.orders_signin import signed_in_call
from tests.support.orders_api import ORDERS_31, serve_orders_api

pytestmark = pytest.mark.live

ORDER = {"id": "A-1", "item": "anvil", "quantity": 1, "status": "open"}


async def frontdesk(environment: dict[str, str], *arguments: str) -> str:
    """Run the installed `frontdesk` command as an operator would; its stdout."""
    command = [str(Path(sys.executable).with_name("frontdesk")), *arguments]
    done = await anyio.run_process(command, env=environment, check=False)
    assert done.returncode == 0, done.stderr.decode() + done.stdout.decode()
    return done.stdout.decode()


async def test_an_sdk_client_calls_a_tool_imported_from_an_openapi_document(
    tmp_path: Path,
) -> None:
    with serve_orders_api() as api:
        api.orders["A-1"] = dict(ORDER)
        database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
        extra = {"FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.0/8"}
        with running_service("sqlite", database_url, tmp_path, extra_env=extra) as service:
            environment = service_environment(service.public_url, database_url, extra)
            companies = tmp_path / "orderly.yaml"
            company = {
                "tenant_key": "orderly",
                "name": "Orderly",
                "signin": {"login": {"type": "dev"}},
            }
            companies.write_text(yaml.safe_dump({"companies": [company]}), encoding="utf-8")
            await frontdesk(environment, "companies", "apply", str(companies))
            document = tmp_path / "orders.json"
            document.write_text(yaml.safe_dump(ORDERS_31, sort_keys=False), encoding="utf-8")
            printed = await frontdesk(
                environment,
                "tools",
                "import-openapi",
                "orderly",
                str(document),
                "--base-url",
                api.base_url,
            )
            assert "orderly: 5 added" in printed

            async with Client(service.mcp_url("orderly")) as client:
                listing = await client.list_tools()
                called = await client.call_tool("getOrder", {"orderId": "A-1"})
                missing = await client.call_tool("getOrder", {"orderId": "B-2"})

            api.jwks_url = f"{service.base_url}/v1/orderly/oauth/jwks.json"
            api.audience = api.base_url
            cancelled, storage = await signed_in_call(
                service, "orderly", "cancelOrder", {"orderId": "A-1"}
            )

    tools = {tool.name: tool for tool in listing.tools}
    assert list(tools) == ["broken", "cancelOrder", "getOrder", "listOrders", "place_order"]
    assert tools["getOrder"].title == "Read one order"
    assert tools["getOrder"].annotations is not None
    assert tools["getOrder"].annotations.read_only_hint is True
    assert tools["getOrder"].output_schema is not None
    assert called.is_error is False
    assert called.structured_content == ORDER
    assert missing.is_error is True
    assert [(method, target) for method, target, _, _ in api.received] == [
        ("GET", "/orders/A-1"),
        ("GET", "/orders/B-2"),
        ("DELETE", "/orders/A-1"),
    ]
    assert cancelled.is_error is False, cancelled
    assert api.orders["A-1"]["status"] == "cancelled"
    [claims] = api.verified_claims
    assert claims["iss"] == f"{service.public_url}/v1/orderly/oauth"
    assert (claims["sub"], claims["email"]) == (f"dev:{EMAIL}", EMAIL)
    assert storage.client_info is not None
    assert claims["client_id"] == storage.client_info.client_id
