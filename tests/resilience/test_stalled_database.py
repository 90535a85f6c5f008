"""A stalled database (it accepts connections and then answers nothing) is answered like one
that is down: the contract's 503 with Retry-After within a few seconds, on MCP and OAuth
alike; /readyz within its bound; a few warning lines, not one per request; and the service
recovers by itself when the database answers again.

PostgreSQL is reached through a proxy of the test's own (tests.support.stall_proxy) that
can stop forwarding while keeping every socket open. On SQLite a stall is a lock another
connection holds.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from sqlalchemy.engine import make_url

from frontdesk.app import READY_SECONDS, Frontdesk
from frontdesk.config import Settings
from frontdesk.observability.log_throttle import outage_warnings
from frontdesk.store.bounds import Timeouts
from tests.conftest import BASE_URL, start_app
from tests.oauth.flows import (
    Pkce,
    authorize,
    authorize_params,
    mcp,
    obtain_tokens,
    refresh,
    register,
    rpc,
    whoami,
    whoami_result,
)
from tests.oauth.retry_window import TENANT as RETRYING
from tests.oauth.retry_window import add_retrying_company
from tests.support.stall_proxy import StallProxy

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = pytest.mark.alone

# The longest a request may wait on a stalled database with the default bounds: queueing
# for a connection or opening one, then one statement (store.bounds), with some slack for
# a shared machine.
ANSWER_WITHIN = Timeouts().acquire + Timeouts().statement + 2.0
# Past this the test has failed anyway; a hang must not hold up the run.
HANG = 30.0
BURST = 200
GUEST_TENANT = "acme"
RECOVERY_DEADLINE = 10.0


@dataclass
class Stalled:
    proxy: StallProxy
    app: Frontdesk
    client: httpx.AsyncClient


@pytest.fixture
async def through_proxy(
    postgres_url: str, make_settings: Callable[..., Settings]
) -> AsyncIterator[Stalled]:
    """The app on PostgreSQL behind a stall proxy; the company read on every request, so
    that guest calls reach the database too."""
    upstream = make_url(postgres_url)
    async with StallProxy(upstream.host or "127.0.0.1", upstream.port or 5432) as proxy:
        settings = make_settings(database_url=proxy.rewrite(postgres_url), company_cache_seconds=0)
        app = await start_app(settings)
        try:
            transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                yield Stalled(proxy, app, client)
        finally:
            proxy.resume()
            await app.services.stop()


async def timed(request: Awaitable[httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    with anyio.fail_after(HANG):
        response = await request
    return response, time.monotonic() - started


def warning_lines(captured: str, event: str) -> list[dict[str, Any]]:
    lines = []
    for line in captured.splitlines():
        if line.startswith("{"):
            record = orjson.loads(line)
            if record.get("event") == event:
                lines.append(record)
    return lines


@pytest.mark.postgres
async def test_a_stalled_postgres_is_answered_503_within_seconds_and_recovers(
    through_proxy: Stalled, tmp_path: Path
) -> None:
    """Signed-in and guest MCP calls, a refresh and an authorization request each get a
    503 with Retry-After within a few seconds; /readyz answers 503 within its bound; once
    the stall ends the same calls succeed, with no restart."""
    client = through_proxy.client
    # A company with a retry window: the refresh sent during the stall may still commit.
    await add_retrying_company(through_proxy.app, tmp_path)
    tokens = await obtain_tokens(client, RETRYING)
    client_id = await register(client)
    assert (await whoami(client, tokens.access, RETRYING)).status_code == 200

    through_proxy.proxy.stall()
    (signed_in, signed_in_took), (guest, guest_took), (token, token_took) = await asyncio.gather(
        timed(whoami(client, tokens.access, RETRYING)),
        timed(mcp(client, rpc("tools/list"), GUEST_TENANT)),
        timed(refresh(client, tokens)),
    )
    sign_in_page, sign_in_took = await timed(
        authorize(client, authorize_params(client_id, Pkce.new()))
    )
    ready, ready_took = await timed(client.get("/readyz"))

    for response, took in (
        (signed_in, signed_in_took),
        (guest, guest_took),
        (token, token_took),
        (sign_in_page, sign_in_took),
    ):
        assert response.status_code == 503, response.text
        assert int(response.headers["retry-after"]) >= 1
        assert took < ANSWER_WITHIN
    assert signed_in.json()["error"]["code"] == -32000
    assert token.json()["error"] == "temporarily_unavailable"
    assert ready.status_code == 503
    assert ready_took < 2.0

    through_proxy.proxy.resume()

    # The connections cut off during the stall are opened again as they are needed.
    with anyio.fail_after(RECOVERY_DEADLINE):
        recovered = await whoami(client, tokens.access, RETRYING)
        while recovered.status_code != 200:
            await anyio.sleep(0.05)
            recovered = await whoami(client, tokens.access, RETRYING)
    signed_in_again = await whoami_result(client, tokens.access, RETRYING)
    assert signed_in_again["email"] == "peter@initech.example"
    # The refresh sent during the stall may have reached the server once it ended; the
    # same refresh token then gets that pair again within the company's retry window.
    assert (await refresh(client, tokens)).status_code == 200
    assert (await mcp(client, rpc("tools/list"), GUEST_TENANT)).status_code == 200
    assert (await client.get("/readyz")).status_code == 200


@pytest.mark.postgres
async def test_an_outage_burst_writes_a_few_warnings_that_count_the_rest(
    through_proxy: Stalled,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """200 requests failing at once on a stalled database write a few warning lines, not
    200; a later line says how many were held back, and the lines account for all."""
    client = through_proxy.client
    assert (await mcp(client, rpc("tools/list"), GUEST_TENANT)).status_code == 200
    monkeypatch.setattr(outage_warnings, "interval", 1.0)
    outage_warnings.clear()
    capsys.readouterr()

    through_proxy.proxy.stall()
    answers = await asyncio.gather(
        *(timed(mcp(client, rpc("tools/list"), GUEST_TENANT)) for _ in range(BURST))
    )
    assert {response.status_code for response, _took in answers} == {503}
    # One more, once the interval has passed: its line carries the count of the rest.
    await anyio.sleep(outage_warnings.interval)
    last, _took = await timed(mcp(client, rpc("tools/list"), GUEST_TENANT))
    assert last.status_code == 503
    readies = await asyncio.gather(*(timed(client.get("/readyz")) for _ in range(3)))
    assert all(response.status_code == 503 for response, _took in readies)

    captured = capsys.readouterr().err
    lines = warning_lines(captured, "database_unavailable")
    assert 2 <= len(lines) <= 12, lines
    assert lines[-1]["suppressed"] >= 1
    assert sum(1 + line.get("suppressed", 0) for line in lines) == BURST + 1
    # Three probes failing together: one line.
    assert len(warning_lines(captured, "not_ready")) == 1


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_sqlite_lock_held_elsewhere_is_answered_503_within_the_bound(
    database_url: str, make_settings: Callable[..., Settings]
) -> None:
    """A write waits for another connection's lock at most the configured bound, then the
    token request is answered 503 with Retry-After; reads go on meanwhile."""
    app = await start_app(make_settings(database_url=database_url, database_timeout_seconds=1.0))
    holder: sqlite3.Connection | None = None
    try:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            tokens = await obtain_tokens(client)
            # Used once before the lock: its first use is written then, not during it.
            assert (await whoami(client, tokens.access)).status_code == 200
            holder = sqlite3.connect(make_url(database_url).database or "", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            token, took = await timed(refresh(client, tokens))
            assert token.status_code == 503, token.text
            assert int(token.headers["retry-after"]) >= 1
            assert took < 3.0
            assert (await whoami(client, tokens.access)).status_code == 200
            holder.execute("ROLLBACK")
            assert (await refresh(client, tokens)).status_code == 200
    finally:
        if holder is not None:
            holder.close()
        await app.services.stop()


def test_readyz_bound_is_within_two_seconds() -> None:
    """The probe's own bound leaves room under the 2 s a balancer is promised."""
    assert READY_SECONDS < 2.0
