"""Tool calls through the real app reach the hourly rollup, on SQLite and PostgreSQL: each
by how it ended, guest or signed in, with its customers and latency; written by a flush
(triggered directly here, or by the worker's own interval), kept across a restart, gone
with the company and with the retention purge, and read by `frontdesk usage`."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import anyio
import httpx
import orjson
import pytest
import structlog
import structlog.testing
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from frontdesk.app import Frontdesk
from frontdesk.cli.main import main
from frontdesk.config import Settings
from frontdesk.store import retention, tool_usage
from frontdesk.store.admin import Administration
from frontdesk.store.database import Database
from frontdesk.store.retention import RetentionPolicy
from frontdesk.store.tables import tool_usage as usage_table
from frontdesk.store.tables import tool_usage_customers
from frontdesk.usage import counters as usage
from frontdesk.usage import flushing
from frontdesk.usage.counters import UsageCounters
from frontdesk.usage.flushing import UsageFlusher
from tests.conftest import BASE_URL, start_app
from tests.oauth import flows
from tests.protocol.rpc import call
from tests.usage.support import errors, figures, usage_now

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("database_url")]

PETER = "peter@initech.example"
SAMIR = "samir@initech.example"


async def call_tool(client: httpx.AsyncClient, name: str, **arguments: object) -> bool:
    """Call an acme tool as a guest; whether its result was an error."""
    result = await call(client, "tools/call", {"name": name, "arguments": arguments})
    return bool(result["isError"])


async def test_each_call_is_counted_by_how_it_ended_once_flushed(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    assert not await call_tool(client, "echo", text="hi")
    assert not await call_tool(client, "echo", text="again")
    assert await call_tool(client, "refuse")
    assert await call_tool(client, "crash")
    assert await call_tool(client, "wrong_shape")
    assert await call_tool(client, "slow", seconds=5)
    assert await call_tool(client, "add", a="one", b=2)
    # A personal tool, and acme has no sign-in: refused before it runs.
    assert await call_tool(client, "whoami")

    # Counted in the worker's memory only, until a flush.
    assert (await usage_now(app, "acme"))["tools"] == []
    assert await app.services.usage.flush()
    report = await usage_now(app, "acme")

    assert [entry["tool"] for entry in report["tools"]] == [
        "add",
        "crash",
        "echo",
        "refuse",
        "slow",
        "whoami",
        "wrong_shape",
    ]
    echo = figures(report, "echo")
    assert (echo["calls"], echo["ok"], errors(echo)) == (2, 2, {})
    assert (echo["guest_calls"], echo["signed_in_calls"], echo["distinct_customers"]) == (2, 0, 0)
    assert echo["latency_ms"]["timed_calls"] == 2
    assert 0 < echo["latency_ms"]["p50"] <= echo["latency_ms"]["p95"] <= 5
    assert errors(figures(report, "refuse")) == {"tool_error": 1}
    assert errors(figures(report, "crash")) == {"backend_error": 1}
    assert errors(figures(report, "wrong_shape")) == {"backend_error": 1}
    slow = figures(report, "slow")
    assert errors(slow) == {"timeout": 1}
    # Cut off at its 0.2 s limit: in the (100, 250] ms bucket.
    assert 100 < slow["latency_ms"]["p50"] <= 250
    # Refused before their provider: counted, with no latency.
    for name, kind in (("add", "invalid_arguments"), ("whoami", "unauthorized")):
        refused = figures(report, name)
        assert errors(refused) == {kind: 1}
        assert refused["latency_ms"] == {"timed_calls": 0, "mean": None, "p50": None, "p95": None}
    totals = report["totals"]
    assert (totals["calls"], totals["ok"], totals["guest_calls"]) == (8, 2, 8)
    assert sum(totals["errors"].values()) == 6
    assert totals["latency_ms"]["timed_calls"] == 6
    # Another company's calls are not this one's.
    assert (await usage_now(app, "globex"))["tools"] == []


async def test_signed_in_calls_count_their_distinct_customers(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    peter = await flows.obtain_tokens(client, email=PETER)
    samir = await flows.obtain_tokens(client, email=SAMIR, name="Samir")
    for token in (peter.access, peter.access, samir.access):
        await flows.whoami_result(client, token)
    response = await flows.mcp(client, flows.tool_call("echo", {"text": "hi"}))
    assert response.json()["result"]["isError"] is False

    assert await app.services.usage.flush()
    report = await usage_now(app, "initech")
    whoami = figures(report, "whoami")
    assert (whoami["calls"], whoami["signed_in_calls"], whoami["guest_calls"]) == (3, 3, 0)
    assert whoami["distinct_customers"] == 2
    echo = figures(report, "echo")
    assert (echo["guest_calls"], echo["distinct_customers"]) == (1, 0)
    assert report["totals"]["distinct_customers"] == 2

    # A second flush adds to the first; a customer already counted in the hour stays one.
    await flows.whoami_result(client, peter.access)
    assert await app.services.usage.flush()
    again = figures(await usage_now(app, "initech"), "whoami")
    assert (again["calls"], again["distinct_customers"]) == (4, 2)


async def test_counts_are_written_as_the_app_stops_and_read_after_a_restart(
    settings: Settings,
) -> None:
    first = await start_app(settings)
    try:
        async with _client(first) as client:
            await call_tool(client, "echo", text="before")
    finally:
        await first.services.stop()

    second = await start_app(settings)
    try:
        assert figures(await usage_now(second, "acme"), "echo")["calls"] == 1
        async with _client(second) as client:
            await call_tool(client, "echo", text="after")
        assert await second.services.usage.flush()
        assert figures(await usage_now(second, "acme"), "echo")["calls"] == 2
    finally:
        await second.services.stop()


async def test_the_worker_flushes_on_its_own_interval(
    make_settings: Callable[..., Settings], database_url: str
) -> None:
    app = await start_app(make_settings(database_url=database_url, usage_flush_seconds=0.05))
    try:
        async with _client(app) as client:
            await call_tool(client, "echo", text="hi")
        deadline = time.monotonic() + 10
        while not (await usage_now(app, "acme"))["tools"]:
            assert time.monotonic() < deadline, "the flusher never wrote the call"
            await asyncio.sleep(0.02)
        assert figures(await usage_now(app, "acme"), "echo")["calls"] == 1
    finally:
        await app.services.stop()


async def test_a_failed_flush_keeps_its_counts_for_the_next(app: Frontdesk) -> None:
    counters = UsageCounters()
    counters.record("acme", "echo", usage.OK, None, 0.003)
    # Nothing listens on port 1: every connection is refused.
    unreachable = Database("postgresql+asyncpg://frontdesk@127.0.0.1:1/none")
    try:
        assert not await UsageFlusher(counters, unreachable, 0).flush()
    finally:
        await unreachable.close()
    assert counters.pending() == 1
    counters.record("acme", "echo", usage.OK, None, 0.003)
    assert await UsageFlusher(counters, app.services.database, 0).flush()
    assert counters.pending() == 0
    assert figures(await usage_now(app, "acme"), "echo")["calls"] == 2


async def test_a_deleted_company_takes_its_usage_and_gets_no_late_counts(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    tokens = await flows.obtain_tokens(client, email=PETER)
    await flows.whoami_result(client, tokens.access)
    assert await app.services.usage.flush()
    assert await _rows(app, "initech") == (1, 1)

    # A call counted before the deletion, flushed after it.
    await flows.whoami_result(client, tokens.access)
    deleted = await Administration(app.services.database.engine).delete_company(
        "initech", datetime.now(UTC)
    )
    assert (deleted.counts["tool_usage"], deleted.counts["tool_usage_customers"]) == (1, 1)
    assert await app.services.usage.flush()
    assert await _rows(app, "initech") == (0, 0)


async def test_the_purge_removes_hours_past_their_retention(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    await flows.obtain_tokens(client, email=PETER)
    now = datetime.now(UTC)
    this_hour = int(now.timestamp()) // 3600 * 3600
    old_hour = this_hour - 401 * 86_400
    tally = [1.0, 3.0, 1.0] + [0.0] * 13
    await tool_usage.add(
        app.services.database.engine,
        {("initech", "whoami", hour, usage.OK, True): tally for hour in (old_hour, this_hour)},
        {("initech", "whoami", hour): {f"dev:{PETER}"} for hour in (old_hour, this_hour)},
    )
    assert await _rows(app, "initech") == (2, 2)
    engine = app.services.database.engine
    dry = await retention.count(engine, RetentionPolicy(), now)
    assert (dry.counts["tool_usage"], dry.counts["tool_usage_customers"]) == (1, 1)
    # 0 keeps them all.
    kept = await retention.purge(engine, RetentionPolicy(usage_retention_days=0), now)
    assert kept.counts["tool_usage"] == 0
    report = await retention.purge(engine, RetentionPolicy(batch_size=1), now)
    assert (report.counts["tool_usage"], report.counts["tool_usage_customers"]) == (1, 1)
    assert await _rows(app, "initech") == (1, 1)
    assert figures(await usage_now(app, "initech"), "whoami")["calls"] == 1


async def test_frontdesk_usage_prints_the_company_usage_as_json(
    app: Frontdesk,
    client: httpx.AsyncClient,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", database_url)
    await call_tool(client, "echo", text="hi")
    await call_tool(client, "refuse")
    assert await app.services.usage.flush()

    result = await _command("usage", "acme")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["tenant_key"] == "acme"
    assert report["totals"]["calls"] == 2
    assert errors(figures(report, "refuse")) == {"tool_error": 1}

    since = (datetime.now(UTC) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S")
    until = (datetime.now(UTC) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S")
    earlier = await _command("usage", "acme", "--since", since, "--until", until)
    assert earlier.exit_code == 0, earlier.output
    assert orjson.loads(earlier.stdout)["totals"]["calls"] == 0

    reversed_range = await _command("usage", "acme", "--since", until, "--until", since)
    assert reversed_range.exit_code == 2
    assert "until must come after since" in reversed_range.output
    unknown = await _command("usage", "nobody")
    assert unknown.exit_code == 2
    assert "nobody" in unknown.output


async def _command(*arguments: str) -> Result:
    invoke = functools.partial(CliRunner().invoke, main, list(arguments))
    return await anyio.to_thread.run_sync(invoke)


async def _rows(app: Frontdesk, tenant_key: str) -> tuple[int, int]:
    async with app.services.database.engine.connect() as connection:
        counts = []
        for table in (usage_table, tool_usage_customers):
            query = select(func.count()).where(table.c.tenant_key == tenant_key)
            counts.append(int((await connection.execute(query)).scalar_one()))
    return counts[0], counts[1]


def _client(app: Frontdesk) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
    return httpx.AsyncClient(transport=transport, base_url=BASE_URL)


async def test_counts_kept_too_long_are_dropped_oldest_first_with_a_warning(
    app: Frontdesk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the database refuses flushes a worker keeps what it counted within its bound;
    past it the oldest hours go, and the log says how much, never which customers."""
    # A logger of its own: one cached by an earlier test would bypass capture_logs.
    monkeypatch.setattr(flushing, "log", structlog.get_logger(flushing.__name__))
    counters = UsageCounters(max_keys=1, max_customers=1)
    hour = int(time.time()) // 3600 * 3600
    old = usage.Counts(
        tallies={("acme", "echo", hour - 3600, usage.OK, True): [1.0] + [0.0] * 15},
        customers={("acme", "echo", hour - 3600): {"dev:old@acme.example"}},
    )
    counters.give_back(old)
    counters.record("acme", "echo", usage.OK, "dev:new@acme.example", 0.002)
    unreachable = Database("postgresql+asyncpg://frontdesk@127.0.0.1:1/none")
    try:
        with structlog.testing.capture_logs() as logs:
            assert not await UsageFlusher(counters, unreachable, 0).flush()
    finally:
        await unreachable.close()
    [dropped] = [entry for entry in logs if entry["event"] == "usage_dropped"]
    assert (dropped["keys"], dropped["customers"]) == (1, 1)
    assert "old@acme.example" not in repr(logs)

    # What was kept is the newest hour, written whole once the database answers.
    assert await UsageFlusher(counters, app.services.database, 0).flush()
    echo = figures(await usage_now(app, "acme"), "echo")
    assert (echo["calls"], echo["signed_in_calls"]) == (1, 1)
