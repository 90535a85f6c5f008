"""A company's whole walk on a running service, through the admin API only: the operator
makes it with an operator key, the company imports its REST API's OpenAPI 3.1 document with
its own key, the MCP Python SDK calls a public operation as a guest and a personal one as a
signed-in customer (whose API checks the JWT against the published JWKS with PyJWT), the
company's key cannot see another company, and the company reads those calls back in its
usage and audit."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from mcp import Client

from tests.live.conftest import running_service, service_environment
from tests.live.customer_browser import EMAIL
from tests.live.orders_signin import signed_in_call
from tests.support.orders_api import ORDERS_31, serve_orders_api

pytestmark = pytest.mark.live

ORDER_ID = {"orderId": "A-1"}
ORDER = {"id": "A-1", "item": "anvil", "quantity": 1, "status": "open"}
# Workers hand their usage counts to the database this often (FRONTDESK_USAGE_FLUSH_SECONDS).
FLUSH_SECONDS = 0.5
USAGE_DEADLINE_SECONDS = 15.0


async def new_key(environment: dict[str, str], *kind: str) -> str:
    """`frontdesk keys create ...` as an operator runs it: the key is its last line."""
    command = [str(Path(sys.executable).with_name("frontdesk")), "keys", "create", *kind]
    done = await anyio.run_process(command, env=environment, check=False)
    assert done.returncode == 0, done.stderr.decode() + done.stdout.decode()
    return done.stdout.decode().strip().splitlines()[-1]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def usage_shows(
    admin: httpx.AsyncClient, key: str, wanted: dict[str, int]
) -> dict[str, dict[str, Any]]:
    """The company's usage per tool once every tool in ``wanted`` shows that many calls;
    the workers flush on their own, so this waits for them, within a deadline."""
    since = (datetime.now(UTC) - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    deadline = time.monotonic() + USAGE_DEADLINE_SECONDS
    while True:
        answer = await admin.get(
            "/admin/v1/companies/orderly/usage", params={"since": since}, headers=bearer(key)
        )
        assert answer.status_code == 200, answer.text
        tools = {entry["tool"]: entry for entry in answer.json()["tools"]}
        if all(tools.get(name, {}).get("calls") == calls for name, calls in wanted.items()):
            return tools
        assert time.monotonic() < deadline, f"usage never showed {wanted}: {tools}"
        await anyio.sleep(FLUSH_SECONDS / 2)


async def test_a_company_made_by_the_admin_api_imports_its_api_and_sees_its_calls(
    tmp_path: Path,
) -> None:
    with serve_orders_api() as api:
        api.orders["A-1"] = dict(ORDER)
        database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
        extra = {
            "FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.0/8",
            "FRONTDESK_USAGE_FLUSH_SECONDS": str(FLUSH_SECONDS),
        }
        with running_service("sqlite", database_url, tmp_path, extra_env=extra) as service:
            environment = service_environment(service.public_url, database_url, extra)
            operator = await new_key(environment, "--operator", "--name", "ops")
            async with httpx.AsyncClient(base_url=service.base_url, timeout=30.0) as admin:
                company = {"name": "Orderly", "signin": {"login": {"type": "dev"}}}
                for tenant in ("orderly", "rival"):
                    created = await admin.put(
                        f"/admin/v1/companies/{tenant}", json=company, headers=bearer(operator)
                    )
                    assert created.status_code == 201, created.text
                orderly = await new_key(environment, "--company", "orderly")

                imported = await admin.post(
                    "/admin/v1/companies/orderly/openapi-imports",
                    json={"document": ORDERS_31, "base_url": api.base_url},
                    headers=bearer(orderly),
                )
                assert imported.status_code == 200, imported.text
                added = imported.json()["added"]
                # Another company is not there at all for this key.
                for path in ("", "/tools", "/usage", "/audit"):
                    hidden = await admin.get(
                        f"/admin/v1/companies/rival{path}", headers=bearer(orderly)
                    )
                    assert hidden.status_code == 404, (path, hidden.text)

                async with Client(service.mcp_url("orderly")) as guest:
                    listing = await guest.list_tools()
                    read = await guest.call_tool("getOrder", {"orderId": "A-1"})

                api.jwks_url = f"{service.base_url}/v1/orderly/oauth/jwks.json"
                api.audience = api.base_url
                cancelled, storage = await signed_in_call(
                    service, "orderly", "cancelOrder", ORDER_ID
                )

                # The SDK's first cancelOrder was a guest's (401): it signed in, called again.
                usage = await usage_shows(admin, orderly, {"getOrder": 1, "cancelOrder": 2})
                audit = await admin.get(
                    "/admin/v1/companies/orderly/audit", headers=bearer(orderly)
                )

    assert {tool.name for tool in listing.tools} == set(added)
    assert read.is_error is False
    assert read.structured_content == ORDER
    assert cancelled.is_error is False, cancelled
    assert api.orders["A-1"]["status"] == "cancelled"
    [claims] = api.verified_claims
    assert claims["iss"] == f"{service.public_url}/v1/orderly/oauth"
    assert claims["email"] == EMAIL
    assert storage.client_info is not None
    assert claims["client_id"] == storage.client_info.client_id

    assert usage["getOrder"]["guest_calls"] == 1
    assert usage["getOrder"]["ok"] == 1
    assert usage["cancelOrder"]["errors"]["unauthorized"] == 1
    assert usage["cancelOrder"]["signed_in_calls"] == 1
    assert usage["cancelOrder"]["distinct_customers"] == 1

    assert audit.status_code == 200, audit.text
    events = [orjson.loads(line) for line in audit.text.splitlines()]
    requests = [event for event in events if event["event"] == "admin_request"]
    # The import and the usage reads were made with the company's key, and are on record.
    assert any("openapi-imports" in orjson.dumps(event).decode() for event in requests)
    # So are the key's making and the customer's client, registered and given tokens.
    seen = {event["event"] for event in events}
    assert {"admin_key_created", "client_registered", "tokens_issued"} <= seen, seen
    [issued] = [event for event in events if event["event"] == "tokens_issued"]
    assert issued["client_id"] == storage.client_info.client_id
