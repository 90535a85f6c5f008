"""Redis killed under two instances and started again: they keep serving, each limits on its
own meanwhile (the documented choice) and says so in its log, and the shared limit resumes
once Redis is back."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx
import pytest

from tests.live.conftest import LiveService, running_service
from tests.oauth.flows import tool_call
from tests.resilience.conftest import Figures, RedisServer, echo_company, write_companies

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.postgres, pytest.mark.redis, pytest.mark.alone]

TENANT = "quota"
LIMIT = 5
# Limits count in fixed windows of wall-clock time, and every window starts afresh: with a
# per-minute limit the test failed whenever a minute turned over during it (a caller that
# was refused was let in again). A day's window turns over at UTC midnight only, and the
# test starts no later than TEST_SECONDS before it.
PER = "day"
TEST_SECONDS = 120.0
WARNING = "rate_limit_storage_unavailable"
# A request while Redis is down answers within this; nothing waits on the dead server.
OUTAGE_LATENCY = 1.0
# How long an instance counts alone before it tries Redis again (ratelimit.py), plus slack.
DEGRADED_WINDOW = 5.0
PHASE_DEADLINE = 15.0
POLL = 0.1


@dataclass(frozen=True)
class Pair:
    a: LiveService
    b: LiveService


@pytest.fixture
def pair(postgres_url: str, own_redis: RedisServer, tmp_path: Path) -> Iterator[Pair]:
    """Two instances on one database and on the test's own Redis, trusting the test as a
    proxy so that each phase can speak as a caller of its own (X-Forwarded-For)."""
    companies = write_companies(tmp_path / "quota.json", echo_company(TENANT, f"{LIMIT}/{PER}"))
    environment = {
        "FRONTDESK_REDIS_URL": own_redis.url,
        "FRONTDESK_TRUSTED_PROXIES": "127.0.0.1/32",
    }
    with contextlib.ExitStack() as stack:
        a, b = (
            stack.enter_context(
                running_service(
                    "postgres",
                    postgres_url,
                    tmp_path,
                    extra_env=environment,
                    extra_companies_files=[companies],
                )
            )
            for _ in range(2)
        )
        yield Pair(a, b)


@dataclass
class Caller:
    """Echo calls as one caller (one forwarded address), with every answer's status and time."""

    clients: dict[str, httpx.AsyncClient]
    statuses: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    _next: int = 0

    def fresh(self) -> str:
        self._next += 1
        return f"198.51.100.{self._next}"

    async def call(self, instance: str, address: str) -> int:
        started = time.monotonic()
        response = await self.clients[instance].post(
            f"/v1/{TENANT}/mcp",
            json=tool_call("echo", {"text": "hi"}),
            headers={"x-forwarded-for": address},
        )
        self.latencies.append(time.monotonic() - started)
        self.statuses.append(response.status_code)
        if response.status_code == 429:
            assert int(response.headers["retry-after"]) >= 1
        else:
            assert response.status_code == 200, response.text
        return response.status_code

    async def calls(self, instances: list[str], address: str) -> list[int]:
        return [await self.call(instance, address) for instance in instances]


def warnings(service: LiveService) -> int:
    return service.log_path.read_text(errors="replace").count(WARNING)


async def test_redis_down_degrades_to_per_instance_limits_and_recovers(
    pair: Pair, own_redis: RedisServer, figures: Figures
) -> None:
    """Without Redis each instance limits alone and keeps serving; with it back, one limit."""
    left_today = 86_400 - time.time() % 86_400
    if left_today < TEST_SECONDS:
        await anyio.sleep(left_today + 1)
    async with (
        httpx.AsyncClient(base_url=pair.a.base_url, timeout=10.0) as a,
        httpx.AsyncClient(base_url=pair.b.base_url, timeout=10.0) as b,
    ):
        caller = Caller({"A": a, "B": b})
        alternating = ["A", "B"] * LIMIT
        shared = caller.fresh()
        assert await caller.calls(alternating[:LIMIT], shared) == [200] * LIMIT
        assert await caller.calls(["A", "B"], shared) == [429, 429]

        own_redis.kill()
        killed_at = time.monotonic()
        alone = caller.fresh()
        during = len(caller.latencies)
        assert await caller.calls(["A"] * LIMIT, alone) == [200] * LIMIT
        assert await caller.call("A", alone) == 429
        assert await caller.calls(["B"] * LIMIT, alone) == [200] * LIMIT
        assert await caller.call("B", alone) == 429
        assert warnings(pair.a) >= 1
        assert warnings(pair.b) >= 1
        # Each instance tries Redis again after its window, fails, and keeps its own count:
        # the caller stays refused on both throughout.
        first_warnings = (warnings(pair.a), warnings(pair.b))
        deadline = time.monotonic() + DEGRADED_WINDOW + PHASE_DEADLINE
        while warnings(pair.a) <= first_warnings[0] or warnings(pair.b) <= first_warnings[1]:
            assert time.monotonic() < deadline, "no instance tried Redis again"
            assert await caller.calls(["A", "B"], alone) == [429, 429]
            await anyio.sleep(POLL)
        outage_latency = max(caller.latencies[during:])
        assert outage_latency < OUTAGE_LATENCY

        await anyio.to_thread.run_sync(own_redis.start)
        back_at = time.monotonic()
        redis_down_seconds = back_at - killed_at
        # Each instance counts in Redis again once its window is over: a fresh caller's
        # first call then shows up there as a new counter.
        resumed: set[str] = set()
        deadline = time.monotonic() + DEGRADED_WINDOW + PHASE_DEADLINE
        while resumed != {"A", "B"}:
            assert time.monotonic() < deadline, f"only {resumed} counted in Redis again"
            for instance in sorted({"A", "B"} - resumed):
                keys = await anyio.to_thread.run_sync(own_redis.keys)
                assert await caller.call(instance, caller.fresh()) == 200
                if await anyio.to_thread.run_sync(own_redis.keys) > keys:
                    resumed.add(instance)
            await anyio.sleep(POLL)
        resumed_seconds = time.monotonic() - back_at

        shared_again = caller.fresh()
        assert await caller.calls(alternating[:LIMIT], shared_again) == [200] * LIMIT
        assert await caller.calls(["B", "A"], shared_again) == [429, 429]

    figures.record(
        "redis_down",
        {
            "faults_survived": 1,
            "instances": 2,
            "requests_sent": len(caller.statuses),
            "requests_answered": len(caller.statuses),
            "answered_200": caller.statuses.count(200),
            "answered_429": caller.statuses.count(429),
            "unexpected_5xx": 0,
            "limit": f"{LIMIT}/{PER}",
            "allowed_per_instance_while_down": LIMIT,
            "redis_down_seconds": round(redis_down_seconds, 2),
            "slowest_answer_while_down_seconds": round(outage_latency, 3),
            "warnings_logged": warnings(pair.a) + warnings(pair.b),
            "shared_limit_resumed_seconds": round(resumed_seconds, 2),
        },
    )
