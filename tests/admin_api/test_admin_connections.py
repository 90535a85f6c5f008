"""A company's clients, grants and audit log through /admin/v1: listed, and revoked with
effect (the revoked token is refused at its next call), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import orjson
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.store.audit import AuditLog
from tests.admin_api.conftest import MakeKey, admin
from tests.oauth import flows

pytestmark = [pytest.mark.anyio]

PETER = "peter@initech.example"


@pytest.fixture
def settings(make_settings: Callable[..., Settings], database_url: str) -> Settings:
    return make_settings(database_url=database_url, company_cache_seconds=0)


async def settled(app: Frontdesk) -> None:
    """On PostgreSQL, wait until this instance has heard of the revocations committed."""
    feed = app.services.database.grant_changes
    if feed is not None:
        await feed.caught_up()


async def test_a_revoked_grant_is_refused_at_the_next_call(
    app: Frontdesk, client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    key = await make_key("initech")
    tokens = await flows.obtain_tokens(client)
    assert (await flows.whoami(client, tokens.access)).status_code == 200

    listed = await admin(client, "GET", "/companies/initech/grants", key)
    [grant] = listed.json()["grants"]
    assert (grant["live"], grant["customer"], grant["email"]) == (True, f"dev:{PETER}", PETER)
    assert grant["client_id"] == tokens.client_id
    mine = await admin(client, "GET", f"/companies/initech/grants?customer={PETER}", key)
    assert mine.json()["grants"] == listed.json()["grants"]
    nobody = await admin(client, "GET", "/companies/initech/grants?customer=nobody", key)
    assert nobody.status_code == 404

    revoked = await admin(client, "DELETE", f"/companies/initech/grants/{grant['id']}", key)
    assert revoked.json() == {"revoked_grants": [grant["id"]]}
    await settled(app)
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    again = await admin(client, "DELETE", f"/companies/initech/grants/{grant['id']}", key)
    assert again.json() == {"revoked_grants": []}
    unknown = await admin(client, "DELETE", "/companies/initech/grants/999999", key)
    assert unknown.status_code == 404
    for malformed in ("x", "0", str(2**31)):
        refused = await admin(client, "DELETE", f"/companies/initech/grants/{malformed}", key)
        assert refused.status_code == 400, malformed


async def test_a_revoked_client_loses_every_grant(
    app: Frontdesk, client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    key = await make_key("initech")
    tokens = await flows.obtain_tokens(client)
    listed = await admin(client, "GET", "/companies/initech/clients", key)
    [row] = listed.json()["clients"]
    assert (row["client_id"], row["registered"], row["live_grants"]) == (
        tokens.client_id,
        True,
        1,
    )
    revoked = await admin(client, "DELETE", f"/companies/initech/clients/{tokens.client_id}", key)
    assert revoked.status_code == 200, revoked.text
    assert len(revoked.json()["revoked_grants"]) == 1
    await settled(app)
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    assert (await flows.refresh(client, tokens)).json()["error"] == "invalid_grant"
    unknown = await admin(client, "DELETE", "/companies/initech/clients/fdc_unknown", key)
    assert unknown.status_code == 404


async def test_audit_is_json_lines_newest_first(
    client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    key = await make_key("initech")
    await flows.obtain_tokens(client)
    response = await admin(client, "GET", "/companies/initech/audit?limit=50", key)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    events = [orjson.loads(line) for line in response.text.splitlines()]
    names = [event["event"] for event in events]
    assert names[-1] == "admin_key_created"  # the oldest: made before the sign-in
    assert "tokens_issued" in names
    assert "client_registered" in names
    # This very request is recorded once it is answered: the next read shows it first.
    later = await admin(client, "GET", "/companies/initech/audit?event=admin_request", key)
    [first, *_] = [orjson.loads(line) for line in later.text.splitlines()]
    assert (first["event"], first["route"]) == (
        "admin_request",
        "/admin/v1/companies/{tenant}/audit",
    )
    future = await admin(client, "GET", "/companies/initech/audit?since=2999-01-01T00:00:00", key)
    assert future.text == ""
    # Each operation takes the query parameters its document names, a list's more than once.
    two_events = "event=admin_request&event=tokens_issued"
    assert (
        await admin(client, "GET", f"/companies/initech/audit?{two_events}", key)
    ).status_code == 200
    for bad in ("since=yesterday", "limit=0", "limit=10001", "limit=x", "sinse=2026-01-01"):
        refused = await admin(client, "GET", f"/companies/initech/audit?{bad}", key)
        assert refused.status_code == 400, bad
    twice = await admin(client, "GET", "/companies/initech/audit?limit=1&limit=2", key)
    assert (
        twice.json()["error_description"] == "the query parameter 'limit' is given more than once"
    )
    other = await admin(client, "GET", "/companies/initech/tools?verbose=1", key)
    assert other.json()["error_description"] == "this operation takes no query parameter 'verbose'"


async def test_a_refusal_under_a_tenant_key_no_company_can_have_is_not_audited(
    app: Frontdesk, client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    """Nothing to record it under: the answer is the refusal, never a failed audit write
    (on PostgreSQL a key past the column's 63 characters was a 500)."""
    key = await make_key()
    too_long = "a" * 100
    refused = await admin(client, "DELETE", f"/companies/{too_long}/grants/x", key)
    assert refused.status_code == 400
    assert await AuditLog(app.services.database.engine).list(too_long) == []
