"""Loading a server with wrk, and what one run measured."""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkit.messages import mcp_request
from benchkit.processes import (
    BenchError,
    cpu_seconds_of_matching,
    machine_cpu_seconds,
    memory_of,
    move_to_cpus,
    pin,
    reaped_cpu_seconds,
    run,
    tree_cpu_seconds,
)
from benchkit.servers import BENCH, Environment, Running, TokenPool
from benchkit.systems import Scenario

WRK_GRACE = 30.0
# Refresh tokens a refresh run starts from, per connection: one for its first request, and
# a spare for a grant refused on the way (wrk/refresh.lua).
TOKENS_PER_CONNECTION = 2


@dataclass(frozen=True, slots=True)
class Measurement:
    scenario: str
    round: int
    seconds: float
    requests: int
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    errors: int  # non-2xx answers
    socket_errors: int  # connect, read, write errors and timeouts
    rss_worker_mb: float
    rss_total_mb: float
    server_cpu: float  # cores busy in the server's processes; 1.0 is one whole core
    wrk_cpu: float
    # The bench database's PostgreSQL backends that lived through the run.
    postgres_cpu: float
    # Everything else on the machine, kernel included: other work disturbs the figures.
    other_cpu: float
    pg_sessions: int | None  # PostgreSQL connections opened during the run
    tokens_short: int = 0
    # When RSS was read (time.monotonic()): the report's "after its last run" is the run
    # that ended last, whatever the rotated order of the rounds put last in a round.
    measured_at: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass
class Plan:
    """What one scenario's wrk runs send: a fixed request (post.lua), or a refresh grant
    with a token of its own each (refresh.lua)."""

    url: str
    script: Path
    env: dict[str, str]
    workers: int = 1
    pool: TokenPool | None = None

    def prepare(self, connections: int) -> None:
        """Before a run: fresh refresh tokens to start from, where refresh.lua reads them.
        Each run starts afresh: the last grants of a run are cut off unanswered."""
        if self.pool is not None:
            tokens = Path(self.env["BENCH_TOKENS_FILE"])
            self.pool.hand_out(TOKENS_PER_CONNECTION * connections, tokens)

    def settle(self, report: dict[str, Any]) -> None:
        if self.pool is not None:
            self.pool.sent += int(report["tokens_sent"])


def make_plan(
    env: Environment,
    scenario: Scenario,
    running: Running,
    token: str | None,
    pool: TokenPool | None,
    tokens: Sequence[str] = (),
) -> Plan:
    files = env.run_dir / "requests"
    files.mkdir(exist_ok=True)
    if scenario.load == "refresh":
        if pool is None:
            raise BenchError(f"{scenario.key} needs a token pool")
        return Plan(
            url=f"{running.base_url}/v1/{scenario.tenant}/oauth/token",
            script=BENCH / "wrk" / "refresh.lua",
            env={
                "BENCH_TOKENS_FILE": str(files / f"{scenario.key}.tokens"),
                "BENCH_CLIENT_ID": pool.signed_in.client_id,
                "BENCH_THREADS": str(env.args.threads),
            },
            workers=running.server.workers,
            pool=pool,
        )
    request = mcp_request(scenario, running.mcp_path(scenario.tenant), token)
    body, headers = files / f"{scenario.key}.body", files / f"{scenario.key}.headers"
    body.write_bytes(request.body)
    headers.write_text("".join(f"{name}: {value}\n" for name, value in request.headers))
    wrk_env = {"BENCH_BODY_FILE": str(body), "BENCH_HEADERS_FILE": str(headers)}
    if tokens:
        # post.lua sends the requests in turn, each with the next customer's token.
        bearer = files / f"{scenario.key}.bearer-tokens"
        bearer.write_text("".join(f"{value}\n" for value in tokens))
        wrk_env["BENCH_BEARER_TOKENS_FILE"] = str(bearer)
    return Plan(
        url=running.base_url + request.path,
        script=BENCH / "wrk" / "post.lua",
        env=wrk_env,
        workers=running.server.workers,
    )


def wrk_command(plan: Plan, args: argparse.Namespace, cpus: str, seconds: int) -> list[str]:
    return [
        *pin(cpus),
        "wrk",
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{seconds}s",
        "--timeout",
        "5s",
        "-s",
        str(plan.script),
        plan.url,
    ]


def parse_report(output: str) -> dict[str, Any]:
    line = next((ln for ln in output.splitlines() if ln.startswith("BENCH_JSON ")), None)
    if line is None:
        raise BenchError(f"wrk printed no report:\n{output}")
    report: dict[str, Any] = json.loads(line.removeprefix("BENCH_JSON "))
    return report


def wrk(plan: Plan, env: Environment, cpus: str, seconds: int) -> tuple[dict[str, Any], float, str]:
    """Run wrk to the end: its report, the CPU it used (cores) and its output."""
    command = wrk_command(plan, env.args, cpus, seconds)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = run(command, timeout=seconds + WRK_GRACE, env={**os.environ, **plan.env})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return parse_report(output), used / seconds, output


def measure(
    env: Environment, scenario: Scenario, running: Running, plan: Plan, round_number: int
) -> Measurement:
    args = env.args
    cpus = env.load_cpus(running.server)
    if args.warmup > 0:
        plan.prepare(args.connections)
        warm, _, _ = wrk(plan, env, cpus, args.warmup)
        plan.settle(warm)
    plan.prepare(args.connections)
    postgres = running.server.database == "postgres"
    sessions_before = env.databases.postgres_sessions() if postgres else 0
    backends = env.databases.name_marker() if postgres else None
    backends_before = cpu_seconds_of_matching(backends) if backends else {}
    # PostgreSQL stands in for a database on a machine of its own: its backends for this
    # run (the warm-up opened the server's pool) work beside the load generator, not on
    # the server's core. With 2 workers that is both cores, as for wrk.
    move_to_cpus(backends_before, cpus)
    postmaster = env.postmaster if postgres else None
    reaped_before = reaped_cpu_seconds(postmaster) if postmaster else 0.0
    machine_before, server_before = machine_cpu_seconds(), tree_cpu_seconds(running.pid)
    report, wrk_cpu, output = wrk(plan, env, cpus, args.duration)
    machine = (machine_cpu_seconds() - machine_before) / args.duration
    server_cpu = (tree_cpu_seconds(running.pid) - server_before) / args.duration
    backends_after = cpu_seconds_of_matching(backends) if backends else {}
    # Backends that lived through the run, and those that ended in it (connections the
    # pool opened and closed), whose time the postmaster collects when they exit.
    reaped = reaped_cpu_seconds(postmaster) - reaped_before if postmaster else 0.0
    live = sum(cpu - backends_before.get(pid, 0.0) for pid, cpu in backends_after.items())
    postgres_cpu = (live + reaped) / args.duration
    sessions = env.databases.postgres_sessions() - sessions_before if postgres else None
    (env.run_dir / f"wrk-{scenario.key}-r{round_number}.txt").write_text(output)
    plan.settle(report)
    memory = memory_of(running.pid)
    seconds = report["duration_us"] / 1e6
    socket_errors = sum(
        report[f"errors_{kind}"] for kind in ("connect", "read", "write", "timeout")
    )
    return Measurement(
        scenario=scenario.key,
        round=round_number,
        seconds=seconds,
        requests=report["requests"],
        rps=report["requests"] / seconds,
        p50_ms=report["p50_us"] / 1000,
        p90_ms=report["p90_us"] / 1000,
        p99_ms=report["p99_us"] / 1000,
        max_ms=report["latency_max_us"] / 1000,
        errors=report["errors_status"],
        socket_errors=socket_errors,
        rss_worker_mb=memory.worker_mb,
        measured_at=time.monotonic(),
        rss_total_mb=memory.total_mb,
        server_cpu=server_cpu,
        wrk_cpu=wrk_cpu,
        postgres_cpu=postgres_cpu,
        other_cpu=max(0.0, machine - server_cpu - wrk_cpu - postgres_cpu),
        pg_sessions=sessions,
        tokens_short=int(report.get("tokens_short", 0)),
    )
