"""GET /admin/v1/companies/{tenantKey}/usage: a company's usage as `frontdesk usage` reads
it, in the shape the admin API's document gives, over the range asked; another company's is
a 404 to a company key. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.usage.report import read_usage
from tests.admin_api.conftest import MakeKey, admin
from tests.protocol.rpc import call

pytestmark = [pytest.mark.anyio]

DOCUMENT: dict[str, Any] = json.loads(
    files("frontdesk.admin_api").joinpath("openapi.json").read_bytes()
)
USAGE = Draft202012Validator(
    {"$ref": "#/components/schemas/Usage", "components": DOCUMENT["components"]}
)


@pytest.fixture
def settings(make_settings: Callable[..., Settings], database_url: str) -> Settings:
    return make_settings(database_url=database_url)


async def test_a_company_reads_its_usage_and_no_other(
    app: Frontdesk, client: httpx.AsyncClient, make_key: MakeKey
) -> None:
    for name, arguments in (("echo", {"text": "hi"}), ("refuse", {})):
        await call(client, "tools/call", {"name": name, "arguments": arguments})
    assert await app.services.usage.flush()
    key = await make_key("acme")

    response = await admin(client, "GET", "/companies/acme/usage", key)
    assert response.status_code == 200, response.text
    body = response.json()
    USAGE.validate(body)
    assert [entry["tool"] for entry in body["tools"]] == ["echo", "refuse"]
    assert body["totals"]["calls"] == 2
    assert body["totals"]["errors"]["tool_error"] == 1
    # The same as the function `frontdesk usage` prints.
    until = datetime.fromisoformat(body["until"])
    since = datetime.fromisoformat(body["since"])
    assert body == await read_usage(app.services.database, "acme", since, until)

    earlier = datetime.now(UTC) - timedelta(days=2)
    past = await admin(
        client,
        "GET",
        "/companies/acme/usage",
        key,
        params={"since": (earlier - timedelta(days=1)).isoformat(), "until": earlier.isoformat()},
    )
    assert past.status_code == 200, past.text
    assert (past.json()["tools"], past.json()["totals"]["calls"]) == ([], 0)

    reversed_range = await admin(
        client,
        "GET",
        "/companies/acme/usage",
        key,
        params={"since": datetime.now(UTC).isoformat(), "until": earlier.isoformat()},
    )
    assert reversed_range.status_code == 400
    malformed = await admin(client, "GET", "/companies/acme/usage?since=yesterday", key)
    assert malformed.status_code == 400
    end_of_time = await admin(
        client, "GET", "/companies/acme/usage", key, params={"until": "9999-12-31T23:59:59Z"}
    )
    assert end_of_time.status_code == 400

    other = await admin(client, "GET", "/companies/acme/usage", await make_key("globex"))
    assert other.status_code == 404
    operator = await admin(client, "GET", "/companies/acme/usage", await make_key())
    assert operator.json()["totals"]["calls"] == 2
    nobody = await admin(client, "GET", "/companies/nobody/usage", await make_key())
    assert nobody.status_code == 404
