"""PostgreSQL stopped and started again under load, on a cluster made for this test: the
service answers the contract's 503 meanwhile, recovers by itself, and half-issues nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from tests.live.conftest import RunningProcess, start_service
from tests.oauth.flows import Tokens, obtain_tokens, refresh, register
from tests.resilience.conftest import NO_LIMIT, Cluster, Figures
from tests.resilience.ledger import assert_whole, read_families, refused_tokens
from tests.resilience.load import Chain, Load, Outcome, wait_until

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.postgres, pytest.mark.alone]

TENANT = "initech"
MCP_WORKERS = 2
REFRESH_WORKERS = 2
SENTINELS = 2
# Bounds of the load: whichever comes first ends it, if the test has not already.
MAX_REQUESTS = 20_000
MAX_SECONDS = 60.0
WARM_UP_OKS = 5
# The outage lasts until both MCP and the token endpoint have answered 503 for this long,
# which is longer than the company cache below: lookups of the company fail too.
OUTAGE_SECONDS = 1.5
COMPANY_CACHE_SECONDS = "0.5"
RECOVERY_DEADLINE = 15.0
PHASE_DEADLINE = 15.0


@pytest.fixture
def service(throwaway_cluster: Cluster, tmp_path: Path) -> Iterator[RunningProcess]:
    """Frontdesk on the throwaway cluster; one process for the whole test, never restarted."""
    running = start_service(
        "postgres",
        throwaway_cluster.url,
        tmp_path,
        extra_env={
            "FRONTDESK_MCP_RATE_LIMIT": NO_LIMIT,
            "FRONTDESK_COMPANY_CACHE_SECONDS": COMPANY_CACHE_SECONDS,
        },
    )
    try:
        yield running
    finally:
        running.stop()


async def sign_in_many(client: httpx.AsyncClient, count: int) -> list[Tokens]:
    client_id = await register(client, TENANT)
    return [
        await obtain_tokens(
            client, TENANT, client_id=client_id, email=f"customer{number}@initech.example"
        )
        for number in range(count)
    ]


async def test_postgres_restart_under_load_answers_503_and_recovers(
    throwaway_cluster: Cluster, service: RunningProcess, figures: Figures
) -> None:
    """PostgreSQL restarting under load: clean 503s, recovery without a restart, whole tokens."""
    base_url = service.service.base_url
    async with httpx.AsyncClient(base_url=base_url, timeout=10.0) as client:
        issued = await sign_in_many(client, MCP_WORKERS + REFRESH_WORKERS + SENTINELS)
    callers = issued[:MCP_WORKERS]
    chains = [Chain.of(tokens) for tokens in issued[MCP_WORKERS:-SENTINELS]]
    sentinels = issued[-SENTINELS:]

    load = Load(base_url, TENANT, MAX_REQUESTS, MAX_SECONDS)
    names = [f"mcp-{n}" for n in range(MCP_WORKERS)] + [
        f"refresh-{n}" for n in range(REFRESH_WORKERS)
    ]
    async with anyio.create_task_group() as group:
        for name, tokens in zip(names[:MCP_WORKERS], callers, strict=True):
            group.start_soon(load.mcp_worker, name, tokens.access)
        for name, chain in zip(names[MCP_WORKERS:], chains, strict=True):
            group.start_soon(load.refresh_worker, name, chain)

        started = time.monotonic()
        await wait_until(
            lambda: all(load.oks_since(started, name) >= WARM_UP_OKS for name in names),
            PHASE_DEADLINE,
            "the warm-up",
        )
        down_at = time.monotonic()
        # A fast stop, as a restart does: open transactions are cut off and rolled back, a
        # commit under way completes and is acknowledged. (In a crash, "immediate", a commit
        # can reach the disk without its acknowledgement: no client can know its outcome.)
        await anyio.to_thread.run_sync(throwaway_cluster.ctl, "stop", "-m", "fast")
        await wait_until(
            lambda: all(
                load.unavailable_seconds(kind) >= OUTAGE_SECONDS for kind in ("mcp", "refresh")
            ),
            PHASE_DEADLINE,
            f"{OUTAGE_SECONDS:g}s of 503s on both MCP and the token endpoint",
        )
        starting_at = time.monotonic()
        await anyio.to_thread.run_sync(throwaway_cluster.ctl, "start")
        await wait_until(
            lambda: all(load.oks_since(starting_at, name) >= WARM_UP_OKS for name in names),
            RECOVERY_DEADLINE,
            "recovery of every worker",
        )
        load.stop()

    bad = load.bad()
    assert not bad, f"{len(bad)} answers were neither ok nor a clean 503: {bad[:5]}"
    assert service.process.poll() is None, "the service had to be restarted"

    async with httpx.AsyncClient(base_url=base_url, timeout=10.0) as client:
        # Nothing half-issued: the database holds exactly what the client got.
        families = await read_families(throwaway_cluster.url, chains)
        for chain, family in zip(chains, families, strict=True):
            assert assert_whole(chain, family) is False
        # Every access token issued, before, during or after the outage, still works.
        every_access = [
            *(tokens.access for tokens in issued[:MCP_WORKERS] + sentinels),
            *(token for chain in chains for token in chain.access_tokens),
        ]
        refused = await refused_tokens(client, TENANT, every_access)
        assert not refused, f"{len(refused)} issued access tokens are refused: {refused[:5]}"
        # The refresh tokens the clients hold work once; the spent ones stay spent.
        for tokens in sentinels:
            renewed = await refresh(client, tokens)
            assert renewed.status_code == 200, renewed.text
        replays = 0
        for chain in chains:
            holder = Tokens("", chain.refresh_token, "", chain.client_id, TENANT)
            renewed = await refresh(client, holder)
            assert renewed.status_code == 200, renewed.text
            replayed = await refresh(client, holder, chain.spent[-1])
            assert replayed.status_code == 400, replayed.text
            assert replayed.json()["error"] == "invalid_grant"
            replays += 1

    recovered = [load.first_ok_since(starting_at, name) or starting_at for name in names]
    refreshes = sum(len(chain.spent) for chain in chains)
    afterwards = len(every_access) + len(sentinels) + 2 * len(chains)
    figures.record(
        "postgres_restart",
        {
            "faults_survived": 1,
            "requests_sent": len(load.answers) + afterwards,
            "requests_answered": len(load.answers) + afterwards,
            "load_requests": len(load.answers),
            "ok": load.count(Outcome.OK),
            "clean_503_mcp": load.count(Outcome.UNAVAILABLE, "mcp"),
            "clean_503_token": load.count(Outcome.UNAVAILABLE, "refresh"),
            "unexpected_5xx": 0,
            "dropped_connections": 0,
            "postgres_stopped_seconds": round(starting_at - down_at, 2),
            "outage_seen_seconds": round(load.unavailable_seconds(), 2),
            "recovery_seconds": round(max(recovered) - starting_at, 2),
            "refreshes_ok": refreshes,
            "access_tokens_verified_after": len(every_access),
            "spent_refresh_replays_refused": replays,
            "service_restarts": 0,
        },
    )
