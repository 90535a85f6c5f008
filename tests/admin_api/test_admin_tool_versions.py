"""``GET /admin/v1/companies/{tenant}/tools/{name}/versions``: each version of a tool as the
service first served it, oldest first; another company's tool is not there, and deleting a
company takes its history with it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from frontdesk.config import Settings
from tests.admin_api.conftest import MakeKey, admin
from tests.support.tool_annotations import read_only

pytestmark = pytest.mark.anyio

TENANT = "versions"
ECHO: dict[str, Any] = {
    "name": "echo",
    "description": "Says back what it is given.",
    "annotations": read_only("Echo"),
    "provider": {"type": "python", "target": "tests.fixtures.tools:echo"},
}
COMPANY = {"name": "Versions", "tools": [ECHO]}
HASH = re.compile(r"[0-9a-f]{64}")


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    # Every request reads the company again: each change is served, and seen, at once.
    return make_settings(company_cache_seconds=0)


async def served(client: httpx.AsyncClient, tenant: str = TENANT) -> None:
    """A request to the company's MCP endpoint, which loads the company as it now is."""
    response = await client.post(
        f"/v1/{tenant}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )
    assert response.status_code == 200, response.text


async def versions(client: httpx.AsyncClient, key: str, tool: str = "echo") -> httpx.Response:
    return await admin(client, "GET", f"/companies/{TENANT}/tools/{tool}/versions", key)


async def test_each_version_served_is_listed_once_oldest_first(
    client: httpx.AsyncClient, operator_key: str
) -> None:
    created = await admin(client, "PUT", f"/companies/{TENANT}", operator_key, json=COMPANY)
    assert created.status_code == 201, created.text
    await served(client)
    await served(client)
    changed = {**ECHO, "description": "Says back what it is given, louder."}
    put = await admin(client, "PUT", f"/companies/{TENANT}/tools/echo", operator_key, json=changed)
    assert put.status_code == 200, put.text
    await served(client)
    slower = {**changed, "timeout": 5}
    put = await admin(client, "PUT", f"/companies/{TENANT}/tools/echo", operator_key, json=slower)
    assert put.status_code == 200, put.text
    await served(client)

    answer = await versions(client, operator_key)
    assert answer.status_code == 200, answer.text
    listed = answer.json()["versions"]
    assert [entry["tool"] for entry in listed] == ["echo"] * 3
    assert all(HASH.fullmatch(entry["version"]) for entry in listed)
    assert all(HASH.fullmatch(entry["definition_hash"]) for entry in listed)
    # The description changed the version; the time limit only the definition hash.
    first, second, third = listed
    assert first["version"] != second["version"] == third["version"]
    assert len({entry["definition_hash"] for entry in listed}) == 3
    assert first["first_seen_at"] <= second["first_seen_at"] <= third["first_seen_at"]


async def test_an_unknown_tool_or_company_is_404_and_another_companys_key_sees_nothing(
    client: httpx.AsyncClient, operator_key: str, make_key: MakeKey
) -> None:
    created = await admin(client, "PUT", f"/companies/{TENANT}", operator_key, json=COMPANY)
    assert created.status_code == 201, created.text
    await served(client)
    assert (await versions(client, operator_key, "nothing")).status_code == 404
    missing = await admin(client, "GET", "/companies/nobody/tools/echo/versions", operator_key)
    assert missing.status_code == 404
    other = await make_key("acme")
    assert (await versions(client, other)).status_code == 404


async def test_deleting_the_company_deletes_its_history(
    client: httpx.AsyncClient, operator_key: str
) -> None:
    created = await admin(client, "PUT", f"/companies/{TENANT}", operator_key, json=COMPANY)
    assert created.status_code == 201, created.text
    await served(client)
    deleted = await admin(client, "DELETE", f"/companies/{TENANT}", operator_key)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["removed"]["tool_versions"] == 1
    again = await admin(client, "PUT", f"/companies/{TENANT}", operator_key, json=COMPANY)
    assert again.status_code == 201, again.text
    assert (await versions(client, operator_key)).status_code == 404
