"""A company whose backend hangs, and one whose backend is down, beside a company whose
backend answers: the hanging calls wait out their own tool timeout, and the other
companies' calls keep answering at once meanwhile."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from frontdesk.tools.http import CONNECTIONS_PER_BACKEND
from tests.live.conftest import LiveService, free_port, running_service
from tests.resilience.conftest import Figures, write_companies
from tests.tools.backends import (
    ScriptedBackend,
    company,
    http_tool,
    reply_after_release,
    reply_json,
    rpc_call,
    text_of,
)
from tests.tools.conftest import scripted_backend

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.alone]

# Long enough for every fast call to be done while the hanging ones still wait.
TIMEOUT = 3.0
# More calls hang than Frontdesk keeps connections to backends (200): a slow company must
# not hold what the others need. They arrive in batches, so the burst of sending them is
# small and the fast calls measure the service, not the test's own burst.
SLOW_BATCHES = 11
BATCH = 20
SLOW_CALLS = SLOW_BATCHES * BATCH
DOWN_CALLS = 20
FAST_CALLS = 200
FAST_CONCURRENCY = 10
# A call stalled behind the hanging ones would take the whole tool timeout.
FAST_P99 = TIMEOUT / 3
# A timed-out call ends within this much after its timeout.
TIMEOUT_SLACK = 1.5


@dataclass(frozen=True)
class Backends:
    hanging: ScriptedBackend
    answering: ScriptedBackend


@pytest.fixture
def backends() -> Iterator[Backends]:
    with scripted_backend() as hanging, scripted_backend() as answering:
        hanging.routes["/tools"] = reply_after_release(reply_json({"text": "late"}))
        answering.routes["/tools"] = reply_json({"text": "quick"})
        yield Backends(hanging, answering)


@pytest.fixture
def service(backends: Backends, tmp_path: Path) -> Iterator[LiveService]:
    nobody = f"http://127.0.0.1:{free_port()}/tools"
    companies = write_companies(
        tmp_path / "backends.json",
        company("slowco", http_tool("lookup", backends.hanging.url("/tools"), timeout=TIMEOUT)),
        company("downco", http_tool("lookup", nobody, timeout=TIMEOUT)),
        company("fastco", http_tool("lookup", backends.answering.url("/tools"), timeout=TIMEOUT)),
    )
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    with running_service(
        "sqlite",
        database_url,
        tmp_path,
        extra_env={"FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.0/8"},
        extra_companies_files=[companies],
    ) as served:
        yield served


@dataclass(frozen=True)
class Call:
    seconds: float
    is_error: bool
    text: str
    ended_at: float


async def call(client: httpx.AsyncClient, tenant: str) -> Call:
    return (await batch(client, tenant, 1))[0]


async def batch(client: httpx.AsyncClient, tenant: str, size: int) -> list[Call]:
    """``size`` calls in one MCP request (the service runs a batch's calls side by side)."""
    started = time.monotonic()
    body = [rpc_call("lookup", request_id=number) for number in range(size)]
    response = await client.post(f"/v1/{tenant}/mcp", json=body if size > 1 else body[0])
    ended = time.monotonic()
    assert response.status_code == 200, response.text
    replies = response.json() if size > 1 else [response.json()]
    return [
        Call(ended - started, reply["result"]["isError"], text_of(reply["result"]), ended)
        for reply in replies
    ]


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


async def test_a_hanging_backend_stalls_only_its_own_company(
    service: LiveService, backends: Backends, figures: Figures
) -> None:
    """More calls hanging on one backend than the pool holds stall only that company's calls."""
    limits = httpx.Limits(max_connections=SLOW_BATCHES + DOWN_CALLS + FAST_CONCURRENCY + 10)
    slow: list[Call] = []
    down: list[Call] = []
    fast: list[Call] = []
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30.0, limits=limits) as client:
        baseline = [await call(client, "fastco") for _ in range(FAST_CONCURRENCY)]

        async def slow_calls() -> None:
            slow.extend(await batch(client, "slowco", BATCH))

        async def down_call() -> None:
            down.append(await call(client, "downco"))

        async def fast_calls(count: int) -> None:
            for _ in range(count):
                fast.append(await call(client, "fastco"))

        async with anyio.create_task_group() as group:
            for _ in range(SLOW_BATCHES):
                group.start_soon(slow_calls)
            hung_from = time.monotonic()
            # The hanging backend holds as many connections as Frontdesk lets one backend.
            await backends.hanging.requests_arrived(CONNECTIONS_PER_BACKEND)
            for _ in range(DOWN_CALLS):
                group.start_soon(down_call)
            async with anyio.create_task_group() as fast_group:
                for _ in range(FAST_CONCURRENCY):
                    fast_group.start_soon(fast_calls, FAST_CALLS // FAST_CONCURRENCY)
            fast_done = time.monotonic()
            hanging_at_the_end = SLOW_CALLS - len(slow)
            held = len(backends.hanging.received)

    fast_seconds = [answer.seconds for answer in fast]
    assert all(not answer.is_error and answer.text == "quick" for answer in fast)
    assert p99(fast_seconds) < FAST_P99, (
        f"fast p99 {p99(fast_seconds):.3f}s, max {max(fast_seconds):.3f}s"
    )
    assert hanging_at_the_end == SLOW_CALLS, "hanging calls ended before the fast ones"
    assert all(answer.ended_at > fast_done for answer in slow)
    expected = f"lookup did not answer within {TIMEOUT:g} seconds."
    assert all(answer.is_error and answer.text == expected for answer in slow), slow[:3]
    assert all(TIMEOUT <= answer.seconds < TIMEOUT + TIMEOUT_SLACK for answer in slow)
    assert all(answer.is_error and answer.seconds < TIMEOUT for answer in down), down[:3]
    figures.record(
        "slow_backend",
        {
            "faults_survived": 1,
            "requests_sent": len(baseline) + SLOW_BATCHES + len(down) + len(fast),
            "requests_answered": len(baseline) + SLOW_BATCHES + len(down) + len(fast),
            "hanging_calls": len(slow),
            "hanging_batches": SLOW_BATCHES,
            "calls_to_a_backend_that_is_down": len(down),
            "fast_calls_while_hanging": len(fast),
            "fast_p50_seconds": round(statistics.median(fast_seconds), 4),
            "fast_p99_seconds": round(p99(fast_seconds), 4),
            "fast_p99_bound_seconds": FAST_P99,
            "baseline_fast_max_seconds": round(max(c.seconds for c in baseline), 4),
            "tool_timeout_seconds": TIMEOUT,
            "hanging_calls_ended_after_seconds_min": round(min(c.seconds for c in slow), 3),
            "hanging_calls_ended_after_seconds_max": round(max(c.seconds for c in slow), 3),
            "hung_seconds": round(fast_done - hung_from, 2),
            "connections_the_hanging_backend_held": held,
            "unexpected_5xx": 0,
        },
    )
