"""Many signed-in calls at once: each is answered for its own customer, and on PostgreSQL
the lookups that start together share one statement (store.access_lookups) without one
call's answer leaking into another's."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.oauth import flows

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

CUSTOMERS = 6


async def test_concurrent_calls_each_reach_their_own_customer(
    client: httpx.AsyncClient, more_companies: None
) -> None:
    client_id = await flows.register(client)
    tokens = [
        await flows.obtain_tokens(client, client_id=client_id, email=f"c{n}@initech.example")
        for n in range(CUSTOMERS)
    ]
    revoked = await flows.obtain_tokens(client, client_id=client_id, email="gone@initech.example")
    await flows.revoke(client, revoked.access, client_id)

    calls = [flows.whoami(client, pair.access) for pair in tokens for _ in range(3)]
    calls.append(flows.whoami(client, revoked.access))
    calls.append(flows.whoami(client, tokens[0].access, "hooli"))
    responses = await asyncio.gather(*calls)

    for number, response in enumerate(responses[: CUSTOMERS * 3]):
        assert response.status_code == 200, response.text
        subject = response.json()["result"]["structuredContent"]["subject"]
        assert subject == f"dev:c{number // 3}@initech.example"
    assert responses[-2].status_code == 401
    assert responses[-1].status_code == 401


async def test_lookups_that_start_together_share_one_statement_on_postgres(
    app: Frontdesk,
    client: httpx.AsyncClient,
    database_url: str,
    lookup_statements: list[int],
) -> None:
    client_id = await flows.register(client)
    tokens = [
        await flows.obtain_tokens(client, client_id=client_id, email=f"c{n}@initech.example")
        for n in range(CUSTOMERS)
    ]
    grants = app.services.grants
    found = await asyncio.gather(*(grants.bearer("initech", pair.access) for pair in tokens * 2))

    subjects = [bearer.customer.subject if bearer else None for bearer in found]
    assert subjects == [f"dev:c{n}@initech.example" for n in range(CUSTOMERS)] * 2
    if database_url.startswith("postgresql"):
        assert lookup_statements == [CUSTOMERS * 2]
    else:
        assert lookup_statements == []


async def test_a_lookup_after_a_revocation_never_joins_an_earlier_statement(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    """Revoke between two lookups of one token: the second sees the revocation."""
    tokens = await flows.obtain_tokens(client)
    grants = app.services.grants
    assert await grants.bearer("initech", tokens.access) is not None
    await flows.revoke(client, tokens.access, tokens.client_id)
    assert await grants.bearer("initech", tokens.access) is None
