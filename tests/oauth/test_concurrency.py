"""Single use under concurrency, on SQLite and PostgreSQL (DESIGN: a code or refresh token is
spent by one conditional UPDATE, so of many concurrent redemptions exactly one wins; a
refresh that loses decides again, and may then be a retry that supersedes the winner's
unused pair)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable

import httpx
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.store.tables import customers
from tests.oauth import flows

# anyio explicit, so that it keeps the database_url parametrization.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

PARALLEL = 20


def outcomes(responses: list[httpx.Response]) -> Counter[tuple[int, str]]:
    return Counter(
        (response.status_code, response.json().get("error", "ok")) for response in responses
    )


async def test_parallel_redemptions_of_one_code_issue_exactly_one_pair(
    client: httpx.AsyncClient,
) -> None:
    """20 redemptions at once: one 200, nineteen invalid_grant, and the replays revoke the pair."""
    signed_in = await flows.sign_in(client)
    responses = await asyncio.gather(*(flows.exchange(client, signed_in) for _ in range(PARALLEL)))
    assert outcomes(list(responses)) == Counter(
        {(200, "ok"): 1, (400, "invalid_grant"): PARALLEL - 1}
    )
    winner = next(response for response in responses if response.status_code == 200)
    tokens = flows.tokens_of(winner, signed_in.client_id)
    # Each losing redemption is a replay of a spent code, which revokes what it issued.
    assert (await flows.whoami(client, tokens.access)).status_code == 401
    assert (await flows.refresh(client, tokens)).status_code == 400


async def test_parallel_refreshes_of_one_token_leave_exactly_one_live_pair(
    client: httpx.AsyncClient,
) -> None:
    """20 refreshes at once: each a new pair or invalid_grant, and of every pair handed out
    exactly one works. Nobody used a pair in between, so the later ones were retries that
    superseded the earlier (oauth.refresh), and the family lives on."""
    tokens = await flows.obtain_tokens(client)
    responses = await asyncio.gather(*(flows.refresh(client, tokens) for _ in range(PARALLEL)))
    assert set(outcomes(list(responses))) <= {(200, "ok"), (400, "invalid_grant")}
    issued = [
        flows.tokens_of(response, tokens.client_id)
        for response in responses
        if response.status_code == 200
    ]
    assert issued
    live = [pair for pair in issued if (await flows.whoami(client, pair.access)).status_code == 200]
    assert len(live) == 1
    assert (await flows.refresh(client, live[0])).status_code == 200


async def test_parallel_sign_ins_of_one_new_customer_record_them_once(
    app: Frontdesk, client: httpx.AsyncClient, browser: Callable[[], httpx.AsyncClient]
) -> None:
    """One new customer finishing sign-ins in several browsers at once: one record, all codes."""
    client_id = await flows.register(client)
    async with contextlib.AsyncExitStack() as stack:
        browsers = [await stack.enter_async_context(browser()) for _ in range(5)]
        signed = await asyncio.gather(
            *(
                flows.sign_in(each, client_id=client_id, email="bob@initech.example")
                for each in browsers
            )
        )
    assert len({signed_in.code for signed_in in signed}) == len(browsers)
    async with app.services.database.engine.connect() as connection:
        subjects = (await connection.execute(select(customers.c.subject))).scalars().all()
    assert subjects == ["dev:bob@initech.example"]
