"""A service killed with SIGKILL in the middle of load, then started again on the same
database: nothing it issued is lost, nothing it spent comes back."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from tests.live.conftest import RunningProcess, free_port, start_service
from tests.oauth.flows import Tokens, obtain_tokens, refresh, register
from tests.resilience.conftest import NO_LIMIT, Figures
from tests.resilience.ledger import assert_whole, read_families, refused_tokens
from tests.resilience.load import Chain, Load, Outcome, wait_until

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.postgres, pytest.mark.alone]

TENANT = "initech"
MCP_WORKERS = 2
REFRESH_WORKERS = 3
MAX_REQUESTS = 20_000
MAX_SECONDS = 60.0
# The kill comes once every worker has had this many answers and the chains this many
# refreshes between them, so it lands in the middle of steady load.
WARM_UP_OKS = 10
REFRESHES_BEFORE_KILL = 30
PHASE_DEADLINE = 15.0
EXIT_DEADLINE = 10.0
ENVIRONMENT = {"FRONTDESK_MCP_RATE_LIMIT": NO_LIMIT}


@pytest.fixture
def processes() -> Iterator[list[RunningProcess]]:
    """Every service process the test starts, stopped afterwards even when it fails."""
    started: list[RunningProcess] = []
    try:
        yield started
    finally:
        for running in started:
            running.stop()


def start(database_url: str, workdir: Path, port: int) -> RunningProcess:
    workdir.mkdir()
    return start_service("postgres", database_url, workdir, port=port, extra_env=ENVIRONMENT)


def holding(chain: Chain, refresh_token: str) -> Tokens:
    return Tokens("", refresh_token, "", chain.client_id, chain.tenant)


async def test_sigkill_mid_load_loses_no_token_and_revives_no_spent_one(
    postgres_url: str, tmp_path: Path, processes: list[RunningProcess], figures: Figures
) -> None:
    """After kill -9 and a restart, issued tokens work and spent refresh tokens stay spent."""
    port = free_port()
    first = start(postgres_url, tmp_path / "before", port)
    processes.append(first)
    base_url = first.service.base_url
    async with httpx.AsyncClient(base_url=base_url, timeout=10.0) as client:
        client_id = await register(client, TENANT)
        issued = [
            await obtain_tokens(client, TENANT, client_id=client_id, email=f"k{n}@initech.example")
            for n in range(MCP_WORKERS + REFRESH_WORKERS)
        ]
    callers = issued[:MCP_WORKERS]
    chains = [Chain.of(tokens) for tokens in issued[MCP_WORKERS:]]

    load = Load(base_url, TENANT, MAX_REQUESTS, MAX_SECONDS)
    names = [f"mcp-{n}" for n in range(MCP_WORKERS)]
    refreshers = [f"refresh-{n}" for n in range(REFRESH_WORKERS)]
    async with anyio.create_task_group() as group:
        for name, tokens in zip(names, callers, strict=True):
            group.start_soon(load.mcp_worker, name, tokens.access)
        for name, chain in zip(refreshers, chains, strict=True):
            group.start_soon(load.refresh_worker, name, chain)
        await wait_until(
            lambda: (
                all(load.oks_since(0.0, name) >= WARM_UP_OKS for name in names + refreshers)
                and sum(len(chain.spent) for chain in chains) >= REFRESHES_BEFORE_KILL
            ),
            PHASE_DEADLINE,
            "steady load",
        )
        load.cut_from = time.monotonic()
        os.kill(first.process.pid, signal.SIGKILL)
        load.stop()
    await anyio.to_thread.run_sync(lambda: first.process.wait(timeout=EXIT_DEADLINE))
    assert first.process.returncode == -signal.SIGKILL

    bad = load.bad()
    assert not bad, f"{len(bad)} answers before the kill were not ok: {bad[:5]}"
    in_flight = sum(1 for chain in chains if chain.in_flight is not None)

    restarting = time.monotonic()
    second = await anyio.to_thread.run_sync(start, postgres_url, tmp_path / "after", port)
    restart_seconds = time.monotonic() - restarting
    processes.append(second)

    # The database holds each family whole: a refresh cut off by the kill is all or nothing.
    families = await read_families(postgres_url, chains)
    completed = [
        assert_whole(chain, family) for chain, family in zip(chains, families, strict=True)
    ]
    async with httpx.AsyncClient(base_url=second.service.base_url, timeout=10.0) as client:
        every_access = [
            *(tokens.access for tokens in callers),
            *(token for chain in chains for token in chain.access_tokens),
        ]
        refused = await refused_tokens(client, TENANT, every_access)
        assert not refused, f"{len(refused)} access tokens issued before the kill: {refused[:5]}"
        renewals = 0
        renewed_access = []
        for chain, cut_off_refresh_happened in zip(chains, completed, strict=True):
            # The token the client holds; after a refresh whose answer was lost with the
            # process, that is the one it sent. Committed before the kill, that refresh
            # spent it: a refresh token works once (interface 3.2), so sending it again ends the
            # family (the test company chose no retry window, oauth.refresh).
            renewed = await refresh(client, holding(chain, chain.refresh_token))
            renewals += 1
            if cut_off_refresh_happened:
                assert renewed.status_code == 400, renewed.text
                assert renewed.json()["error"] == "invalid_grant"
                continue
            assert renewed.status_code == 200, renewed.text
            renewed_access.append(renewed.json()["access_token"])
        refused = await refused_tokens(client, TENANT, renewed_access)
        assert not refused, f"{len(refused)} renewed access tokens are refused: {refused[:5]}"
        # Spent stays spent: the newest spent token first, while its family is still alive.
        replays = 0
        for chain, cut_off_refresh_happened in zip(chains, completed, strict=True):
            spent = list(reversed(chain.spent))
            if cut_off_refresh_happened:
                assert chain.in_flight is not None
                spent.insert(0, chain.in_flight)
            for token in spent:
                replayed = await refresh(client, holding(chain, token))
                assert replayed.status_code == 400, replayed.text
                assert replayed.json()["error"] == "invalid_grant"
                replays += 1

    answered = load.count(Outcome.OK)
    figures.record(
        "sigkill",
        {
            "faults_survived": 1,
            "requests_sent": len(load.answers) + len(every_access) + 2 * renewals + replays,
            "requests_answered": answered + len(every_access) + 2 * renewals + replays,
            "load_requests_before_kill": answered,
            "requests_cut_by_the_kill": load.count(Outcome.CUT),
            "refreshes_cut_by_the_kill": in_flight,
            "cut_refreshes_that_completed": sum(completed),
            "refreshes_ok_before_kill": sum(len(chain.spent) for chain in chains),
            "access_tokens_working_after_restart": len(every_access),
            "spent_refresh_tokens_replayed_and_refused": replays,
            "restart_seconds": round(restart_seconds, 2),
            "unexpected_5xx": 0,
            "dropped_connections": 0,
        },
    )
