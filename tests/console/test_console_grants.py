"""The console's clients and grants, audit and usage: a revocation from the console ends
the grant at once (the client's next call is 401, on SQLite and on PostgreSQL, whose
instances keep tokens in memory), and is in the audit log."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.console.support import CONSOLE_COMPANIES, STAFF, console_sign_in, csrf_of, post
from tests.oauth import flows

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

CUSTOMER = "george@customer.example"


@pytest.fixture
async def companies(app: Frontdesk, tmp_path: Path) -> Frontdesk:
    await flows.add_companies(app, tmp_path, CONSOLE_COMPANIES)
    return app


def family_ids(page: str) -> list[str]:
    return re.findall(r'name="family_id" value="(\d+)"', page)


async def test_revoking_a_grant_in_the_console_ends_it(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    tokens = await flows.obtain_tokens(client, "vandelay", email=CUSTOMER)
    assert (await flows.whoami_result(client, tokens.access, "vandelay"))["subject"]

    await console_sign_in(client)
    page = await client.get("/console/vandelay/clients")
    assert page.status_code == 200, page.text
    assert CUSTOMER in page.text
    assert flows.CLIENT_NAME in page.text
    [family] = family_ids(page.text)

    revoked = await post(
        client, "/console/vandelay/grants/revoke", {"csrf": csrf_of(page.text), "family_id": family}
    )
    assert revoked.status_code == 303, revoked.text
    assert (await flows.whoami(client, tokens.access, "vandelay")).status_code == 401
    assert family_ids((await client.get("/console/vandelay/clients")).text) == []

    audit = await client.get("/console/vandelay/audit")
    assert "console_change" in audit.text
    assert f"by: {STAFF}" in audit.text
    assert "grant_revoked" in audit.text
    assert "family_revoked" in audit.text
    assert "staff_revoked" in audit.text


async def test_revoking_a_client_ends_every_grant_it_holds(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    tokens = await flows.obtain_tokens(client, "vandelay", email=CUSTOMER)
    await console_sign_in(client)
    page = await client.get("/console/vandelay/clients")
    [tokens_client] = re.findall(r'name="client_id" value="([^"]+)"', page.text)
    revoked = await post(
        client,
        "/console/vandelay/clients/revoke",
        {"csrf": csrf_of(page.text), "client_id": tokens_client},
    )
    assert revoked.status_code == 303, revoked.text
    assert (await flows.whoami(client, tokens.access, "vandelay")).status_code == 401


async def test_another_companys_grant_cannot_be_revoked(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    """initech's grant, named by its id on vandelay's page, is unknown there."""
    tokens = await flows.obtain_tokens(client, "initech")
    grants = await companies.services.database.engine.connect()
    try:
        from sqlalchemy import select

        from frontdesk.store.tables import token_families

        found = await grants.execute(select(token_families.c.id))
        [initech_family] = [row[0] for row in found]
    finally:
        await grants.close()
    await console_sign_in(client)
    csrf = csrf_of((await client.get("/console/vandelay/clients")).text)
    refused = await post(
        client, "/console/vandelay/grants/revoke", {"csrf": csrf, "family_id": str(initech_family)}
    )
    assert refused.status_code == 404
    assert (await flows.whoami(client, tokens.access, "initech")).status_code == 200
