"""Single use under concurrency, on SQLite and PostgreSQL (DESIGN: a code or refresh token is
spent by one conditional UPDATE, so of many concurrent redemptions exactly one wins)."""

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


async def test_parallel_refreshes_of_one_token_issue_at_most_one_pair(
    client: httpx.AsyncClient,
) -> None:
    """20 refreshes at once: one 200, nineteen invalid_grant, and the family ends revoked."""
    tokens = await flows.obtain_tokens(client)
    responses = await asyncio.gather(*(flows.refresh(client, tokens) for _ in range(PARALLEL)))
    assert outcomes(list(responses)) == Counter(
        {(200, "ok"): 1, (400, "invalid_grant"): PARALLEL - 1}
    )
    winner = next(response for response in responses if response.status_code == 200)
    newest = flows.tokens_of(winner, tokens.client_id)
    # The losers presented a token that was spent: reuse, so the family is revoked (RFC 9700).
    assert (await flows.whoami(client, newest.access)).status_code == 401
    assert (await flows.refresh(client, newest)).status_code == 400
    assert (await flows.whoami(client, tokens.access)).status_code == 401


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
