"""Single use under concurrency, on SQLite and PostgreSQL (DESIGN: a code or refresh token is
spent by one conditional UPDATE, so of many concurrent redemptions exactly one wins; a
refresh that loses decides again: reuse by the contract's rule, or, where the company chose
a retry window, a retry answered with the winner's pair)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from frontdesk.app import Frontdesk
from frontdesk.store.tables import customers
from tests.oauth import flows
from tests.oauth.retry_window import TENANT as RETRYING
from tests.oauth.retry_window import add_retrying_company

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


async def test_parallel_refreshes_of_one_token_spend_it_once_and_end_the_family(
    client: httpx.AsyncClient,
) -> None:
    """20 refreshes at once, where the company keeps the contract's rule: one 200, the rest
    invalid_grant, and since the token came back spent, its family ends (interface 3.2, RFC 9700
    4.14.2), the one pair handed out included."""
    tokens = await flows.obtain_tokens(client)
    responses = await asyncio.gather(*(flows.refresh(client, tokens) for _ in range(PARALLEL)))
    assert outcomes(list(responses)) == Counter(
        {(200, "ok"): 1, (400, "invalid_grant"): PARALLEL - 1}
    )
    winner = next(response for response in responses if response.status_code == 200)
    issued = flows.tokens_of(winner, tokens.client_id)
    assert (await flows.whoami(client, issued.access)).status_code == 401
    assert (await flows.refresh(client, issued)).status_code == 400


async def test_parallel_refreshes_within_a_retry_window_all_get_the_one_pair(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """20 refreshes at once where the company chose a retry window: every one 200 with the
    same pair (the others are retries of the one rotation), which works, and the family
    lives on."""
    await add_retrying_company(app, tmp_path)
    tokens = await flows.obtain_tokens(client, RETRYING)
    responses = await asyncio.gather(*(flows.refresh(client, tokens) for _ in range(PARALLEL)))
    assert outcomes(list(responses)) == Counter({(200, "ok"): PARALLEL})
    issued = {flows.tokens_of(response, tokens.client_id, RETRYING) for response in responses}
    assert len(issued) == 1
    (pair,) = issued
    assert (await flows.whoami(client, pair.access, RETRYING)).status_code == 200
    assert (await flows.refresh(client, pair)).status_code == 200


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
