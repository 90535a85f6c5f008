"""Who may do what at /admin/v1: a key is required and checked; a company key sees its own
company only (another is a 404 exactly like a missing one, on every route); only operator
keys create or delete companies; each key is held to its rate limit; each use is audited."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from frontdesk.admin_api import ROUTES
from frontdesk.app import Frontdesk
from frontdesk.store.admin_keys import AdminKeys
from frontdesk.store.audit import AuditLog
from tests.admin_api.conftest import MakeKey, admin
from tests.support.tool_annotations import read_only

pytestmark = [pytest.mark.anyio]

# A value for each path parameter of ROUTES, so every route is reached.
FILLED = {"{name}": "echo", "{clientId:path}": "fdc_unknown", "{grantId}": "1"}
BODIES = {"PUT": {"name": "Renamed"}, "PATCH": {"name": "Renamed"}}


def company_paths(tenant: str) -> list[tuple[str, str]]:
    """Every (method, path) of ROUTES under one company."""
    found: list[tuple[str, str]] = []
    for path, _handler, methods in ROUTES:
        if "{tenant}" not in path:
            continue
        filled = path.replace("{tenant}", tenant)
        for placeholder, value in FILLED.items():
            filled = filled.replace(placeholder, value)
        found.extend((method, filled) for method in methods)
    return found


async def test_no_key_or_a_wrong_one_is_401_with_a_bearer_challenge(
    client: httpx.AsyncClient,
) -> None:
    missing = await admin(client, "GET", "/companies", None)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == 'Bearer realm="frontdesk-admin"'
    assert missing.json()["error"] == "unauthorized"
    for wrong in ("fdk_op_not-a-real-key", "something-else", "x" * 5000):
        refused = await admin(client, "GET", "/companies", wrong)
        assert refused.status_code == 401
        assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    basic = await client.get("/admin/v1/companies", headers={"Authorization": "Basic YTpi"})
    assert basic.status_code == 401


async def test_a_revoked_key_is_401_from_its_next_request(
    app: Frontdesk, client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    key = await make_key("acme")
    assert (await admin(client, "GET", "/companies/acme", key)).status_code == 200
    keys = AdminKeys(app.services.database.engine)
    [listed] = await keys.list()
    assert await keys.revoke(listed.key_id, datetime.now(UTC))
    refused = await admin(client, "GET", "/companies/acme", key)
    assert refused.status_code == 401
    assert refused.json()["error_description"] == "the admin key is unknown or revoked"


async def test_a_company_key_cannot_see_another_company_on_any_route(
    client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    """Every route under another company answers as under one that does not exist."""
    key = await make_key("acme")
    for method, path in company_paths("initech"):
        other = await admin(client, method, path, key, json=BODIES.get(method))
        missing = await admin(
            client, method, path.replace("initech", "nosuch"), key, json=BODIES.get(method)
        )
        assert other.status_code == 404, (method, path, other.text)
        assert other.json() == {
            "error": "not_found",
            "error_description": "no company has the tenant key 'initech'",
        }, (method, path)
        assert missing.json()["error_description"] == "no company has the tenant key 'nosuch'"
        assert set(other.headers) == set(missing.headers), (method, path)
    listed = await admin(client, "GET", "/companies", key)
    assert [row["tenant_key"] for row in listed.json()["companies"]] == ["acme"]


async def test_only_an_operator_key_creates_or_deletes_a_company(
    client: httpx.AsyncClient, make_key: MakeKey, operator_key: str
) -> None:
    key = await make_key("acme")
    deleted = await admin(client, "DELETE", "/companies/acme", key)
    assert deleted.status_code == 403
    assert deleted.json()["error_description"] == "only an operator key may delete a company"
    assert (await admin(client, "GET", "/companies/acme", key)).status_code == 200

    listed = await admin(client, "GET", "/companies", operator_key)
    assert {row["tenant_key"] for row in listed.json()["companies"]} >= {"acme", "initech"}
    created = await admin(client, "PUT", "/companies/newco", operator_key, json={"name": "New"})
    assert created.status_code == 201, created.text


async def test_each_use_is_audited_under_the_company_touched(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str
) -> None:
    assert (await admin(client, "GET", "/companies/initech/tools", operator_key)).status_code == 200
    [event] = await AuditLog(app.services.database.engine).list("initech")
    assert event.event == "admin_request"
    assert event.detail["method"] == "GET"
    assert event.detail["route"] == "/admin/v1/companies/{tenant}/tools"
    assert event.detail["status"] == 200
    assert event.detail["key_id"].startswith("key_")
    assert operator_key not in str(event.detail)


async def test_a_path_no_admin_route_serves_is_a_404_in_the_same_shape(
    client: httpx.AsyncClient, operator_key: str
) -> None:
    for path in ("/admin/v1", "/admin/v1/companies/", "/admin/v1/nothing"):
        response = await admin(client, "GET", path.removeprefix("/admin/v1"), operator_key)
        assert response.status_code == 404, path
        assert response.json()["error"] == "not_found"
        assert "location" not in response.headers


async def test_only_an_operator_key_names_a_new_python_function(
    client: httpx.AsyncClient, make_key: MakeKey, operator_key: str
) -> None:
    """A python provider runs the deployment's code in-process: a company key may reuse the
    functions its company names already, never name another."""
    key = await make_key("initech")
    add = {
        "description": "Adds two integers.",
        "annotations": read_only("Add"),
        "provider": {"type": "python", "target": "tests.fixtures.tools:add"},
    }
    refused = await admin(client, "PUT", "/companies/initech/tools/add", key, json=add)
    assert refused.status_code == 403
    assert refused.json()["error_description"] == (
        "only an operator key may name a python provider's function"
    )
    document = (await admin(client, "GET", "/companies/initech", key)).json()
    patched = await admin(
        client, "PUT", "/companies/initech", key, json={**document, "tools": [add]}
    )
    assert patched.status_code == 403
    assert "add" not in str((await admin(client, "GET", "/companies/initech/tools", key)).json())

    again = {**add, "provider": {"type": "python", "target": "tests.fixtures.tools:echo"}}
    reused = await admin(client, "PUT", "/companies/initech/tools/echo_again", key, json=again)
    assert reused.status_code == 201, reused.text
    by_operator = await admin(client, "PUT", "/companies/initech/tools/add", operator_key, json=add)
    assert by_operator.status_code == 201, by_operator.text


async def test_a_company_key_cannot_move_its_company_nor_raise_its_rate_limit(
    client: httpx.AsyncClient, make_key: MakeKey, operator_key: str
) -> None:
    key = await make_key("yankee")  # a company of the us region
    document = (await admin(client, "GET", "/companies/yankee", key)).json()
    for change in ({"region": "eu"}, {"rate_limit": "100000/second"}):
        refused = await admin(client, "PATCH", "/companies/yankee", key, json=change)
        assert refused.status_code == 403, change
        replaced = await admin(client, "PUT", "/companies/yankee", key, json={**document, **change})
        assert replaced.status_code == 403, change
    # Left out, a field keeps what it is; other fields are the company's to change.
    renamed = await admin(client, "PATCH", "/companies/yankee", key, json={"name": "Yankee"})
    assert renamed.status_code == 200, renamed.text
    moved = await admin(client, "PATCH", "/companies/yankee", operator_key, json={"region": "eu"})
    assert moved.status_code == 200, moved.text
