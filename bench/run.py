"""Measure Frontdesk against the ceiling for Python and the MCP SDKs, on this machine.

``bench/run`` makes the environment and calls this (see bench/README.md). It starts every
server on loopback (1-worker servers pinned to one core, wrk to the other), checks that
each scenario answers correctly with one real request, loads each with wrk for several
rounds in alternating order, and reports requests/s, p50/p99 latency and server RSS, each
also as a ratio to the bare-ASGI ceiling measured in the same run. Every wait is bounded,
and every process started here is stopped on the way out, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx

from benchkit.load import Measurement, Plan, make_plan, measure
from benchkit.messages import check_reply, check_signed_in, mcp_request
from benchkit.processes import (
    BenchError,
    Processes,
    Quiet,
    interrupt_on_termination,
    run,
    say,
    shielded,
)
from benchkit.profiles import Profile, profile
from benchkit.report import Report, machine_facts, render, source_state, standard_notes
from benchkit.rows import rows_of
from benchkit.servers import (
    BENCH,
    FASTMCP_PYTHON,
    Databases,
    Environment,
    Running,
    TokenPool,
    backend_companies,
    start_backend,
    start_server,
)
from benchkit.signin import (
    CUSTOMERS,
    HTTP_TIMEOUT,
    SUBJECT,
    SignedIn,
    check_refresh,
    customer_email,
    sign_in,
)
from benchkit.systems import (
    SCENARIO_KEYS,
    SCENARIOS,
    SERVER_BY_KEY,
    Database,
    Scenario,
    database_of,
)

ROOT = BENCH.parent


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=8, help="seconds per measured run")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of load before each run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (on the load CPU)")
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated scenarios (the ceiling always runs): {', '.join(SCENARIO_KEYS)}",
    )
    parser.add_argument("--skip", default="", help="comma-separated scenarios to leave out")
    parser.add_argument("--no-postgres", action="store_true", help="leave out PostgreSQL")
    parser.add_argument(
        "--postgres",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="admin URL; the bench creates its own database there and drops it at the end",
    )
    parser.add_argument(
        "--profile",
        default="ceiling,guest-call,bearer-pg,refresh-pg",
        help="scenarios to profile with py-spy after the rounds ('' for none)",
    )
    parser.add_argument("--profile-seconds", type=int, default=5)
    parser.add_argument("--profile-top", type=int, default=15)
    parser.add_argument(
        "--quiet-below",
        type=float,
        default=0.15,
        help="before each run, wait until the machine is less busy than this (0-1)...",
    )
    parser.add_argument(
        "--quiet-wait", type=int, default=600, help="...within this many seconds in all"
    )
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1)
    parser.add_argument("--node", default=shutil.which("node") or "node")
    parser.add_argument(
        "--frontdesk-venv",
        type=Path,
        default=ROOT / "bench" / ".venv-frontdesk",
        help="where Frontdesk is installed (bench/run makes it: runtime dependencies only)",
    )
    parser.add_argument("--results", type=Path, default=BENCH / "RESULTS.md")
    parser.add_argument("--keep-runs", type=int, default=5, help="run directories to keep")
    parser.add_argument("--no-write", action="store_true", help="leave RESULTS.md alone")
    args = parser.parse_args(argv)
    args.argv = list(argv)
    if min(args.duration, args.rounds, args.connections, args.threads) < 1 or args.warmup < 0:
        parser.error("duration, rounds, connections and threads must be positive")
    if args.keep_runs < 1:
        parser.error("--keep-runs must be at least 1")
    if args.threads > args.connections:
        parser.error("wrk needs at least one connection per thread")
    if args.server_cpu == args.load_cpu:
        parser.error("server and load generator need different CPUs")
    return args


def chosen(args: argparse.Namespace) -> list[Scenario]:
    only = {key for key in args.only.split(",") if key}
    skip = {key for key in args.skip.split(",") if key}
    unknown = (only | skip) - set(SCENARIO_KEYS)
    if unknown:
        raise BenchError(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if "ceiling" in skip:
        raise BenchError("the ceiling cannot be skipped: every figure is a ratio to it")
    return [
        scenario
        for scenario in SCENARIOS
        if (scenario.key == "ceiling" or not only or scenario.key in only)
        and scenario.key not in skip
        and not (args.no_postgres and database_of(scenario) == "postgres")
    ]


# Why ContextForge's gateway has no row (issue 32 asks for it where it installs).
CONTEXTFORGE_NOTE = (
    "IBM ContextForge 1.1.0 (mcp-contextforge-gateway, Python 3.12 from pyenv) has no row: it"
    " installs from PyPI and starts here (with the secrets its init_secrets script makes and"
    " SSRF_ALLOW_LOCALHOST for the loopback backend), but registering the backend's GET /echo"
    " as a REST tool through its admin API was refused ('Access denied') with an admin token"
    " from its create_jwt_token, so the bench does not load it yet."
)


def check_tools(args: argparse.Namespace, scenarios: Sequence[Scenario]) -> None:
    missing = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if any(s.server == "mcp-typescript" for s in scenarios) and not shutil.which(args.node):
        missing.append("node")
    if any(database_of(s) == "postgres" for s in scenarios) and not shutil.which("psql"):
        missing.append("psql")
    if not (args.frontdesk_venv / "bin" / "frontdesk").exists():
        missing.append(f"{args.frontdesk_venv}/bin/frontdesk")
    if missing:
        raise BenchError("missing: " + ", ".join(missing) + " (bench/run installs wrk itself)")
    cpus = os.sched_getaffinity(0)
    if not {args.server_cpu, args.load_cpu} <= cpus:
        raise BenchError(f"CPUs {args.server_cpu} and {args.load_cpu} are not both usable here")


def rotated(items: Sequence[Scenario], by: int) -> Iterator[Scenario]:
    for index in range(len(items)):
        yield items[(index + by) % len(items)]


LOG_KEEP = 256 * 1024


def keep_little(run_dir: Path, keep_runs: int) -> None:
    """Access logs of a run reach hundreds of MB: keep each server log's first and last
    256 KB, and only the newest ``keep_runs`` run directories."""
    for log in run_dir.glob("server-*.log"):
        if log.stat().st_size > 4 * LOG_KEEP:
            with log.open("rb") as whole:
                head = whole.read(LOG_KEEP)
                whole.seek(-LOG_KEEP, os.SEEK_END)
                tail = whole.read()
            log.write_bytes(head + b"\n[... trimmed by bench/run ...]\n" + tail)
    runs = sorted(p for p in run_dir.parent.iterdir() if p.is_dir() and not p.is_symlink())
    for old in runs[:-keep_runs]:
        shutil.rmtree(old, ignore_errors=True)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.scenarios = chosen(args)
        self.started = datetime.now(UTC)
        run_dir = BENCH / "runs" / self.started.strftime("%Y%m%dT%H%M%SZ")
        run_dir.mkdir(parents=True)
        latest = BENCH / "runs" / "latest"
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_dir.name)
        needs_postgres = any(database_of(s) == "postgres" for s in self.scenarios)
        self.env = Environment(
            args=args,
            run_dir=run_dir,
            processes=Processes(),
            databases=Databases(
                sqlite_url=f"sqlite+aiosqlite:///{run_dir / 'frontdesk.db'}",
                postgres_admin=args.postgres if needs_postgres else None,
            ),
            frontdesk_python=args.frontdesk_venv / "bin" / "python",
            bench_python=Path(sys.executable),
        )
        self.running: dict[str, Running] = {}
        # A sign-in per database and company (the backend scenarios' company has its own).
        self.signed_in: dict[tuple[Database, str], SignedIn] = {}
        # The other customers of the signed-in load, by database and company.
        self.customers: dict[tuple[Database, str], list[SignedIn]] = {}
        self.pools: dict[Database, TokenPool] = {}
        self.plans: dict[str, Plan] = {}
        self.measurements: list[Measurement] = []
        self.profiles: list[Profile] = []
        self.quiet = Quiet(args.quiet_below, args.quiet_wait)
        self.notes: list[str] = []
        if not (FASTMCP_PYTHON.parent.parent / ".bench-installed").exists():
            left_out = [s.key for s in self.scenarios if s.server == "fastmcp"]
            self.scenarios = [s for s in self.scenarios if s.server != "fastmcp"]
            if left_out:
                self.notes.append(
                    f"{', '.join(left_out)}: left out, FastMCP did not install into"
                    " bench/.venv-fastmcp (bench/run's output says why)."
                )
        if any(scenario.needs_backend for scenario in self.scenarios):
            self.notes.append(CONTEXTFORGE_NOTE)
        self.postgres_version: str | None = None
        self.source = "unknown"

    def run(self) -> str:
        check_tools(self.args, self.scenarios)
        self.quiet.wait("the start", limit=self.args.quiet_wait / 2)
        try:
            self.set_up()
            self.check()
            self.rounds()
            self.profile()
        finally:
            with shielded():
                self.env.processes.stop_all()
                self.env.databases.drop_postgres()
                keep_little(self.env.run_dir, self.args.keep_runs)
        return self.report()

    def set_up(self) -> None:
        env = self.env
        if env.databases.postgres_admin is not None:
            self.postgres_version = env.databases.create_postgres()
            env.postmaster = env.databases.postmaster()
        databases = sorted({d for s in self.scenarios if (d := database_of(s)) is not None})
        if any(scenario.needs_backend for scenario in self.scenarios):
            start_backend(env)
            say(f"the JSON backend answers at {env.backend_url}")
        for kind in databases:
            say(f"applying bench/companies.yaml to {kind}")
            command = [str(env.frontdesk), "companies", "apply", str(BENCH / "companies.yaml")]
            run(command, timeout=120, env=env.frontdesk_env(kind, 0))
            if env.backend_url:
                command = [str(env.frontdesk), "companies", "apply", str(backend_companies(env))]
                run(command, timeout=120, env=env.frontdesk_env(kind, 0))
        self.source = source_state()
        say(f"Frontdesk: {self.source}")
        for key in dict.fromkeys(s.server for s in self.scenarios):
            self.running[key] = start_server(env, SERVER_BY_KEY[key])
        for scenario in self.scenarios:
            database = database_of(scenario)
            if scenario.load in ("bearer", "refresh") and database is not None:
                where = (database, scenario.tenant)
                if where not in self.signed_in:
                    server = self.running[scenario.server]
                    signed_in = sign_in(server.base_url, scenario.tenant)
                    say(f"signed in over HTTP on {database} in {signed_in.seconds:.2f}s")
                    self.signed_in[where] = signed_in
                if scenario.load == "bearer" and where not in self.customers:
                    # The signed-in load is many customers of one assistant, not one
                    # customer: each of these signs in over HTTP, with the same client.
                    server = self.running[scenario.server]
                    client_id = self.signed_in[where].client_id
                    self.customers[where] = [
                        sign_in(server.base_url, scenario.tenant, customer_email(n), client_id)
                        for n in range(1, CUSTOMERS)
                    ]
                    say(f"signed {CUSTOMERS} customers in on {database}")
                if scenario.load == "refresh" and database not in self.pools:
                    signed_in = self.signed_in[where]
                    self.pools[database] = TokenPool(env, database, scenario.tenant, signed_in)

    def check(self) -> None:
        """One real request per scenario, its reply checked, before any load."""
        with httpx.Client(timeout=HTTP_TIMEOUT) as client:
            for scenario in self.scenarios:
                server = self.running[scenario.server]
                database = database_of(scenario)
                token: str | None = None
                pool = self.pools.get(database) if database and scenario.load == "refresh" else None
                if pool is not None:
                    client_id = pool.signed_in.client_id
                    check_refresh(server.base_url, scenario.tenant, client_id, pool.take())
                else:
                    tokens: list[str] = []
                    if scenario.load == "bearer" and database is not None:
                        where = (database, scenario.tenant)
                        customers = [self.signed_in[where], *self.customers[where]]
                        others = (f"dev:{customer_email(n)}" for n in range(1, CUSTOMERS))
                        subjects = [SUBJECT, *others]
                        for customer, expected in zip(customers, subjects, strict=True):
                            subject = check_signed_in(
                                client, server.base_url, scenario.tenant, customer.access_token
                            )
                            if subject != expected:
                                raise BenchError(f"{scenario.key}: {expected} got {subject}")
                        tokens = [customer.access_token for customer in customers]
                        token = tokens[0]
                    request = mcp_request(scenario, server.mcp_path(scenario.tenant), token)
                    check_reply(scenario, request.send(client, server.base_url))
                self.plans[scenario.key] = make_plan(
                    self.env, scenario, server, token, pool, tokens
                )
                say(f"checked {scenario.key}: it answers correctly")

    def rounds(self) -> None:
        args = self.args
        minutes = len(self.scenarios) * args.rounds * (args.warmup + args.duration) / 60
        say(f"{args.rounds} rounds of {len(self.scenarios)} scenarios: about {minutes:.1f} min")
        for round_number in range(1, args.rounds + 1):
            for scenario in rotated(self.scenarios, round_number - 1):
                server, plan = self.running[scenario.server], self.plans[scenario.key]
                self.quiet.wait(f"{scenario.key}, round {round_number}", limit=60)
                found = measure(self.env, scenario, server, plan, round_number)
                self.measurements.append(found)
                say(
                    f"round {round_number} {scenario.key}: {found.rps:,.0f} req/s, "
                    f"p50 {found.p50_ms:.2f} ms, p99 {found.p99_ms:.2f} ms, "
                    f"RSS {found.rss_worker_mb:.0f} MB, server CPU {found.server_cpu:.0%}, "
                    f"errors {found.errors + found.socket_errors}, "
                    f"other CPU {found.other_cpu:.0%}"
                )

    def profile(self) -> None:
        if self.args.profile_seconds <= 0:
            return
        wanted = [key for key in self.args.profile.split(",") if key]
        for scenario in self.scenarios:
            if scenario.key in wanted:
                server = self.running[scenario.server]
                found = profile(self.env, scenario, server, self.plans[scenario.key])
                if found is not None:
                    self.profiles.append(found)

    def report(self) -> str:
        rows = rows_of(self.scenarios, self.measurements)
        for database, pool in self.pools.items():
            self.notes.append(
                f"Refresh tokens ({database}): the OAuth flow ran once over HTTP (register → "
                "authorize → consent → dev login → code → token); `mint_refresh_tokens.py` "
                f"then issued {pool.issued:,} refresh tokens ({pool.mint_seconds:.1f} s) "
                "through Frontdesk's own code and token grant (`Grants.issue_code`, "
                "`Grants.redeem_code`), each in a family of its own with the flow's client, "
                "customer and scope: two per connection for each load to start from. Each "
                "grant's answer gave a later request its refresh token, as a client "
                f"refreshes; {pool.sent:,} refresh tokens were sent, each once (check, "
                "warm-ups, runs, profile)."
            )
        now = source_state()
        if now != self.source:
            self.notes.append(
                f"Frontdesk's source changed during the run (now: {now}). The servers ran "
                "the code as it was when they started, which is what the header names."
            )
        self.notes += standard_notes(rows)
        text = render(
            Report(
                started=self.started,
                args=self.args,
                facts=machine_facts(self.env, self.postgres_version, self.source),
                rows=rows,
                running=list(self.running.values()),
                profiles=self.profiles,
                notes=self.notes,
                quiet=self.quiet,
            )
        )
        run_dir = self.env.run_dir
        measurements = [m.as_json() for m in self.measurements]
        (run_dir / "measurements.json").write_text(json.dumps(measurements, indent=1))
        (run_dir / "RESULTS.md").write_text(text)
        return text


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    interrupt_on_termination()
    try:
        text = Bench(args).run()
    except BenchError as error:
        say(f"failed: {error}")
        return 1
    except KeyboardInterrupt:
        say("interrupted; every process started here has been stopped")
        return 130
    print(text)
    if not args.no_write:
        args.results.write_text(text)
        say(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
