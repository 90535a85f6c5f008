"""A company through /admin/v1: created, read back with its secrets redacted, replaced,
patched, its parts changed and deleted, each validated as `companies apply` validates and
each reaching the instances that serve it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.store.companies import CompanyChanged
from tests.admin_api.conftest import admin
from tests.conftest import BASE_URL, start_app
from tests.support.tool_annotations import read_only

pytestmark = [pytest.mark.anyio]

SECRET = "backend-signing-secret-0123456789"

NEWCO: dict[str, Any] = {
    "name": "New Co",
    "signin": {"login": {"type": "dev"}},
    "tools": [
        {
            "name": "echo",
            "description": "Repeats text.",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "provider": {"type": "python", "target": "tests.fixtures.tools:echo"},
            "annotations": {
                "title": "Echo",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        },
        {
            "name": "lookup",
            "description": "Looks an order up at the company's backend.",
            "annotations": read_only("Look an order up"),
            "access": "personal",
            "provider": {
                "type": "http",
                "url": "https://backend.newco.example/lookup",
                "secret": SECRET,
            },
        },
    ],
}


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(company_cache_seconds=0)


@pytest.fixture
async def other_instance(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """Another instance on the same database, as a second server would be."""
    app = await start_app(settings, companies=None)
    try:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.8", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client
    finally:
        await app.services.stop()


async def listed_tools(client: httpx.AsyncClient, tenant: str) -> dict[str, str]:
    """The tools the instance lists to a guest of the company (MCP tools/list), each with
    its description."""
    response = await client.post(
        f"/v1/{tenant}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )
    assert response.status_code == 200, response.text
    return {tool["name"]: tool["description"] for tool in response.json()["result"]["tools"]}


async def test_put_creates_then_replaces_and_get_redacts_the_secrets(
    client: httpx.AsyncClient, operator_key: str, other_instance: httpx.AsyncClient
) -> None:
    created = await admin(client, "PUT", "/companies/newco", operator_key, json=NEWCO)
    assert created.status_code == 201, created.text
    assert created.json()["tenant_key"] == "newco"
    read = await admin(client, "GET", "/companies/newco", operator_key)
    assert read.status_code == 200
    document = read.json()
    assert document["tools"][1]["provider"]["secret"] == "<redacted>"
    assert SECRET not in read.text
    assert document["region"] == "eu"  # the file's defaults, filled in
    # Served by another instance at once (its company cache is 0 s here).
    assert list(await listed_tools(other_instance, "newco")) == ["echo", "lookup"]

    replaced = await admin(
        client, "PUT", "/companies/newco", operator_key, json={**NEWCO, "name": "NewCo Ltd"}
    )
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["name"] == "NewCo Ltd"
    again = await admin(client, "PUT", "/companies/newco", operator_key, json=NEWCO)
    assert again.status_code == 200


async def test_put_names_each_field_at_fault_and_writes_nothing(
    client: httpx.AsyncClient, operator_key: str
) -> None:
    bad = {
        **NEWCO,
        "region": "mars",
        "tools": [{**NEWCO["tools"][0], "provider": {"type": "python", "target": "nowhere:x"}}],
    }
    refused = await admin(client, "PUT", "/companies/newco", operator_key, json=bad)
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["error"] == "invalid_company"
    assert [problem["field"] for problem in body["errors"]] == ["region"]
    unimportable = await admin(
        client, "PUT", "/companies/newco", operator_key, json={**bad, "region": "eu"}
    )
    assert unimportable.status_code == 422
    assert [p["field"] for p in unimportable.json()["errors"]] == ["tools[0].provider.target"]
    # A printed definition applied back cannot replace a secret with its placeholder.
    redacted = {
        **NEWCO,
        "tools": [
            {
                **NEWCO["tools"][1],
                "provider": {**NEWCO["tools"][1]["provider"], "secret": "<redacted>"},
            }
        ],
    }
    placeholder = await admin(client, "PUT", "/companies/newco", operator_key, json=redacted)
    assert placeholder.status_code == 422
    # Named as `companies apply` names it: the provider by its type.
    assert placeholder.json()["errors"][0]["field"] == "tools[0].provider.http.secret"
    renamed = await admin(
        client, "PUT", "/companies/newco", operator_key, json={**NEWCO, "tenant_key": "other"}
    )
    assert renamed.json()["errors"] == [
        {"field": "tenant_key", "message": "must be 'newco', as in the path"}
    ]
    assert (await admin(client, "GET", "/companies/newco", operator_key)).status_code == 404

    not_json = await admin(
        client,
        "PUT",
        "/companies/newco",
        operator_key,
        content=b"{",
        headers={"Content-Type": "application/json"},
    )
    assert (not_json.status_code, not_json.json()["error"]) == (400, "invalid_request")
    form = await admin(client, "PUT", "/companies/newco", operator_key, data={"name": "x"})
    assert form.status_code == 415


async def test_patch_merges_and_keeps_the_secrets(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str
) -> None:
    await admin(client, "PUT", "/companies/newco", operator_key, json=NEWCO)
    patched = await admin(
        client,
        "PATCH",
        "/companies/newco",
        operator_key,
        json={"name": "Patched", "instructions": "Be brief.", "signin": None},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["name"] == "Patched"
    assert "signin" not in patched.json() or patched.json()["signin"] is None
    stored = await app.services.companies.get("newco")
    assert stored is not None
    opened = app.services.companies.opened(stored)
    assert opened["instructions"] == "Be brief."
    assert opened["tools"][1]["provider"]["secret"] == SECRET
    invalid = await admin(client, "PATCH", "/companies/newco", operator_key, json={"name": ""})
    assert invalid.status_code == 422
    assert invalid.json()["errors"][0]["field"] == "name"


async def test_tools_signin_and_branding_one_by_one(
    client: httpx.AsyncClient, operator_key: str, other_instance: httpx.AsyncClient
) -> None:
    await admin(client, "PUT", "/companies/newco", operator_key, json=NEWCO)
    tool = {
        "description": "Adds two integers.",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        },
        "annotations": read_only("Add"),
        "provider": {"type": "python", "target": "tests.fixtures.tools:add"},
    }
    added = await admin(client, "PUT", "/companies/newco/tools/add", operator_key, json=tool)
    assert added.status_code == 201, added.text
    assert added.json()["name"] == "add"
    assert list(await listed_tools(other_instance, "newco")) == ["add", "echo", "lookup"]
    changed = await admin(
        client,
        "PUT",
        "/companies/newco/tools/add",
        operator_key,
        json={**tool, "description": "Sums."},
    )
    assert changed.status_code == 200
    assert (await listed_tools(other_instance, "newco"))["add"] == "Sums."
    listed = await admin(client, "GET", "/companies/newco/tools", operator_key)
    assert [t["name"] for t in listed.json()["tools"]] == ["echo", "lookup", "add"]
    assert SECRET not in listed.text
    one = await admin(client, "GET", "/companies/newco/tools/lookup", operator_key)
    assert one.json()["provider"]["secret"] == "<redacted>"
    bad = await admin(
        client, "PUT", "/companies/newco/tools/add", operator_key, json={**tool, "timeout": 0}
    )
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "tools[2].timeout"
    removed = await admin(client, "DELETE", "/companies/newco/tools/add", operator_key)
    assert removed.status_code == 204
    gone = await admin(client, "GET", "/companies/newco/tools/add", operator_key)
    assert gone.status_code == 404

    signin = await admin(client, "GET", "/companies/newco/signin", operator_key)
    assert signin.json()["login"] == {"type": "dev"}
    shorter = await admin(
        client,
        "PUT",
        "/companies/newco/signin",
        operator_key,
        json={"login": {"type": "dev"}, "access_token_minutes": 15},
    )
    assert shorter.status_code == 200, shorter.text
    assert shorter.json()["access_token_minutes"] == 15
    too_long = await admin(
        client,
        "PUT",
        "/companies/newco/signin",
        operator_key,
        json={"login": {"type": "dev"}, "access_token_minutes": 600},
    )
    assert too_long.json()["errors"][0]["field"] == "signin.access_token_minutes"

    assert (
        await admin(client, "GET", "/companies/newco/branding", operator_key)
    ).status_code == 404
    branding = await admin(
        client, "PUT", "/companies/newco/branding", operator_key, json={"accent_color": "#1f6f4a"}
    )
    assert branding.status_code == 200, branding.text
    read = await admin(client, "GET", "/companies/newco/branding", operator_key)
    assert read.json()["accent_color"] == "#1f6f4a"
    unknown = await admin(
        client, "PUT", "/companies/newco/branding", operator_key, json={"colour": "red"}
    )
    assert unknown.status_code == 422
    assert unknown.json()["errors"][0]["field"] == "branding.colour"


async def test_delete_does_what_companies_delete_does(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str, make_key: Callable[..., Any]
) -> None:
    company_key = await make_key("initech")
    deleted = await admin(client, "DELETE", "/companies/initech", operator_key)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["tenant_key"] == "initech"
    assert deleted.json()["removed"]["companies"] == 1
    assert (await admin(client, "GET", "/companies/initech", operator_key)).status_code == 404
    # Its keys ended with it.
    assert (await admin(client, "GET", "/companies", company_key)).status_code == 401
    again = await admin(client, "DELETE", "/companies/initech", operator_key)
    assert again.status_code == 404


async def test_a_change_is_never_written_over_one_it_did_not_see(
    app: Frontdesk, client: httpx.AsyncClient, operator_key: str
) -> None:
    """GET answers the revision in ETag; a PUT or PATCH with an older If-Match is 412 and
    writes nothing; a change made from a reading is refused once another landed."""
    await admin(client, "PUT", "/companies/newco", operator_key, json=NEWCO)
    read = await admin(client, "GET", "/companies/newco", operator_key)
    tag = read.headers["etag"]
    first = await admin(
        client,
        "PATCH",
        "/companies/newco",
        operator_key,
        json={"name": "First"},
        headers={"If-Match": tag},
    )
    assert first.status_code == 200, first.text
    assert first.headers["etag"] != tag
    late = await admin(
        client,
        "PATCH",
        "/companies/newco",
        operator_key,
        json={"name": "Late"},
        headers={"If-Match": tag},
    )
    assert late.status_code == 412
    assert late.json()["error"] == "precondition_failed"
    replaced = await admin(
        client,
        "PUT",
        "/companies/newco",
        operator_key,
        json={**NEWCO, "name": "Late"},
        headers={"If-Match": tag},
    )
    assert replaced.status_code == 412
    assert (await admin(client, "GET", "/companies/newco", operator_key)).json()["name"] == "First"
    missing = await admin(
        client,
        "PUT",
        "/companies/other",
        operator_key,
        json={"name": "Other"},
        headers={"If-Match": '"1"'},
    )
    assert missing.status_code == 412

    # What a change made from an older reading meets in the store (a tool's PUT racing
    # another change): CompanyChanged, and nothing written.
    stored = await app.services.companies.get("newco")
    assert stored is not None
    opened = app.services.companies.opened(stored)
    await app.services.companies.apply([{**opened, "name": "Meanwhile"}])
    with pytest.raises(CompanyChanged):
        await app.services.companies.apply(
            [{**opened, "name": "Stale"}], read_at={"newco": stored.revision}
        )
    assert (await admin(client, "GET", "/companies/newco", operator_key)).json()["name"] == (
        "Meanwhile"
    )
