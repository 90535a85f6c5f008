"""Many instances on one PostgreSQL database: their counts add up in the rollup, and
flushes that write the same rows at the same moment lose nothing and wait for each other
rather than deadlock (store.tool_usage)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import pytest
from sqlalchemy.engine import make_url

from frontdesk.config import Settings
from frontdesk.store.database import Database
from frontdesk.usage import counters as usage
from frontdesk.usage.counters import UsageCounters
from frontdesk.usage.flushing import LAST_FLUSH_SECONDS, UsageFlusher
from tests.conftest import BASE_URL, start_app
from tests.protocol.rpc import call
from tests.support.stall_proxy import StallProxy
from tests.usage.support import figures, usage_now

pytestmark = [pytest.mark.anyio]

TOOLS = ("echo", "add", "rich", "refuse")


async def test_two_instances_add_up_in_one_rollup(
    make_settings: Callable[..., Settings], postgres_url: str
) -> None:
    settings = make_settings(database_url=postgres_url)
    apps = [await start_app(settings), await start_app(settings, companies=None)]
    try:
        for calls, app in zip((3, 5), apps, strict=True):
            transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                for _ in range(calls):
                    await call(client, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        flushed = await asyncio.gather(*(app.services.usage.flush() for app in apps))
        assert flushed == [True, True]
        for app in apps:
            echo = figures(await usage_now(app, "acme"), "echo")
            assert (echo["calls"], echo["latency_ms"]["timed_calls"]) == (8, 8)
    finally:
        for app in apps:
            await app.services.stop()


async def test_concurrent_flushes_of_the_same_rows_lose_nothing(
    make_settings: Callable[..., Settings], postgres_url: str
) -> None:
    settings = make_settings(database_url=postgres_url)
    app = await start_app(settings)
    # Each flusher has its engine, as another instance would.
    databases = [Database(postgres_url), Database(postgres_url)]
    counters = [UsageCounters(), UsageCounters()]
    flushers = [
        UsageFlusher(counter, database, 0)
        for counter, database in zip(counters, databases, strict=True)
    ]
    rounds = 15
    try:
        for _ in range(rounds):
            for counter in counters:
                # The same rows in both, in opposite orders of counting.
                for tool in TOOLS if counter is counters[0] else reversed(TOOLS):
                    counter.record("acme", tool, usage.OK, None, 0.004)
                    counter.record("acme", tool, usage.TOOL_ERROR, None, 0.02)
            assert await asyncio.gather(*(flusher.flush() for flusher in flushers)) == [True, True]
        report = await usage_now(app, "acme")
        for tool in TOOLS:
            entry = figures(report, tool)
            assert entry["calls"] == 2 * 2 * rounds
            assert entry["ok"] == 2 * rounds
            assert entry["errors"]["tool_error"] == 2 * rounds
            assert entry["latency_ms"]["timed_calls"] == 2 * 2 * rounds
            # Half at most 5 ms, half in (10, 25].
            assert entry["latency_ms"]["p50"] == 5.0
    finally:
        for database in databases:
            await database.close()
        await app.services.stop()


async def test_a_flush_to_a_stalled_database_ends_within_its_bound_and_keeps_its_counts(
    make_settings: Callable[..., Settings], postgres_url: str
) -> None:
    """The database accepts and then answers nothing: the flush gives up within its bound
    (a worker's stop must end within its grace), keeps its counts, and writes them all once
    the database answers again."""
    app = await start_app(make_settings(database_url=postgres_url))
    upstream = make_url(postgres_url)
    try:
        async with StallProxy(upstream.host or "127.0.0.1", upstream.port or 5432) as proxy:
            database = Database(proxy.rewrite(postgres_url))
            counters = UsageCounters()
            flusher = UsageFlusher(counters, database, 0)
            try:
                counters.record("acme", "echo", usage.OK, None, 0.004)
                proxy.stall()
                started = time.monotonic()
                assert not await flusher.flush(within=LAST_FLUSH_SECONDS)
                assert time.monotonic() - started < LAST_FLUSH_SECONDS + 1
                assert counters.pending() == 1
                proxy.resume()
                counters.record("acme", "echo", usage.OK, None, 0.004)
                assert await flusher.flush()
            finally:
                await database.close()
        assert figures(await usage_now(app, "acme"), "echo")["calls"] == 2
    finally:
        await app.services.stop()
