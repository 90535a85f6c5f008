"""Draw Frontdesk's Grafana dashboard over a load run: a picture for the docs.

``bench/dashboard`` calls this (see bench/README.md). Grafana cannot be installed here, so
the dashboard's own queries are drawn by Prometheus: one ``frontdesk serve`` (2 workers,
SQLite, bench/companies.yaml and bench/dashboard-companies.yaml applied) is scraped with
the metrics bearer token by a Prometheus with the shipped alert rules loaded, while wrk
sends the bench's guest, 2026-07-28, signed-in and refresh loads in overlapping phases and
benchkit.side_traffic the rest (sign-ins, reuse, revocations, denied consents, failing
and slow backend calls, a rate limit). Then a console template generated from
deploy/grafana/frontdesk-dashboard.json is screenshot with Chromium. Every process started
here is stopped on the way out, whatever happens.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from benchkit.console import PAGE_WIDTH, Window, console_page
from benchkit.load import Plan, make_plan, parse_report, wrk_command
from benchkit.processes import (
    BenchError,
    Processes,
    interrupt_on_termination,
    run,
    say,
    shielded,
)
from benchkit.prometheus import start_prometheus
from benchkit.servers import BENCH, Databases, Environment, Running, TokenPool, start_server
from benchkit.side_traffic import SIGNIN_TENANT, SideTraffic
from benchkit.signin import HTTP_TIMEOUT, customer_email, sign_in
from benchkit.systems import Scenario, Server

ROOT = BENCH.parent
DASHBOARD = ROOT / "deploy" / "grafana" / "frontdesk-dashboard.json"
ALERTS = ROOT / "deploy" / "prometheus" / "frontdesk-alerts.yml"
COMPANIES = (BENCH / "companies.yaml", BENCH / "dashboard-companies.yaml")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Graphs start this long before the load and end this long after it.
MARGIN_SECONDS = 5
RENDER_TIMEOUT_MS = 60_000


@dataclass(frozen=True, slots=True)
class Phase:
    """One of the bench's loads, from ``start`` to ``end`` (shares of the run)."""

    scenario: Scenario
    start: float
    end: float


SERVER = "frontdesk"
PHASES = (
    Phase(Scenario("guest-call", "guest tools/call", SERVER, "call", "bench"), 0.0, 0.7),
    Phase(Scenario("guest-call-2026", "guest 2026-07-28", SERVER, "call-2026", "bench"), 0.3, 1),
    Phase(Scenario("bearer", "signed-in tools/call", SERVER, "bearer", "benchauth"), 0.15, 0.85),
    Phase(Scenario("refresh", "refresh grants", SERVER, "refresh", "benchauth"), 0.55, 0.9),
)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/dashboard", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=180, help="seconds of load")
    parser.add_argument("--connections", type=int, default=8, help="per wrk load")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "dashboard.png")
    parser.add_argument(
        "--rate-interval", default="15s", help="what Grafana's $__rate_interval stands for"
    )
    parser.add_argument(
        "--frontdesk-venv",
        type=Path,
        default=ROOT / ".venv",
        help="where Frontdesk is installed (the project's .venv)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the run's temporary directory")
    args = parser.parse_args(argv)
    if args.duration < 20 or args.connections < 1:
        parser.error("--duration must be at least 20 and --connections at least 1")
    # What benchkit's Environment reads: one wrk thread, and the load on every usable core.
    cpus = sorted(os.sched_getaffinity(0))
    args.threads, args.server_cpu, args.load_cpu = 1, cpus[0], cpus[-1]
    return args


def check_tools(args: argparse.Namespace) -> None:
    missing = [tool for tool in ("wrk", "taskset", "prometheus") if shutil.which(tool) is None]
    if not Path(CHROMIUM).exists():
        missing.append(CHROMIUM)
    if not (args.frontdesk_venv / "bin" / "frontdesk").exists():
        missing.append(f"{args.frontdesk_venv}/bin/frontdesk")
    if missing:
        raise BenchError("missing: " + ", ".join(missing))


def plans(env: Environment, running: Running) -> tuple[dict[str, Plan], str]:
    """Each phase's wrk load, as bench/run makes it, for customers signed in over HTTP
    with one client; and that client."""
    base_url = running.base_url
    first = sign_in(base_url, SIGNIN_TENANT)
    customers = [first] + [
        sign_in(base_url, SIGNIN_TENANT, customer_email(n), first.client_id)
        for n in range(1, env.args.connections)
    ]
    tokens = [customer.access_token for customer in customers]
    pool = TokenPool(env, "sqlite", SIGNIN_TENANT, first)
    say(f"signed {len(customers)} customers in")
    planned = {
        phase.scenario.key: make_plan(
            env,
            phase.scenario,
            running,
            tokens[0],
            pool if phase.scenario.load == "refresh" else None,
            tokens if phase.scenario.load == "bearer" else (),
        )
        for phase in PHASES
    }
    return planned, first.client_id


def load(env: Environment, running: Running) -> Window:
    """The phases' wrk loads, and a step of side traffic every second, for the duration."""
    args = env.args
    planned, client_id = plans(env, running)
    side = SideTraffic(running.base_url, client_id)
    waiting = sorted(PHASES, key=lambda phase: phase.start)
    loads: list[int] = []
    say(f"loading for {args.duration}s")
    started = time.time()
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        while (elapsed := time.time() - started) < args.duration:
            while waiting and waiting[0].start * args.duration <= elapsed:
                phase = waiting.pop(0)
                plan = planned[phase.scenario.key]
                plan.prepare(args.connections)
                seconds = max(1, round((phase.end - phase.start) * args.duration))
                command = wrk_command(plan, args, env.load_cpus(running.server), seconds)
                log = env.run_dir / f"wrk-{phase.scenario.key}.txt"
                wrk_env = {**os.environ, **plan.env}
                loads.append(env.processes.start(phase.scenario.key, command, log, env=wrk_env))
            side.step(client, elapsed / args.duration)
            time.sleep(max(0.0, 1 - (time.time() - started - elapsed)))
    ended = time.time()
    deadline = time.monotonic() + 30
    while any(env.processes.alive(pid) for pid in loads) and time.monotonic() < deadline:
        time.sleep(0.5)
    for phase in PHASES:
        report = parse_report((env.run_dir / f"wrk-{phase.scenario.key}.txt").read_text())
        say(
            f"{phase.scenario.label}: {report['requests']:,} requests, "
            f"{report['errors_status']:,} not 2xx"
        )
    say(f"side traffic: {side.customers} sign-ins, {side.steps} steps")
    return Window(end=ended + MARGIN_SECONDS, duration=ended - started + 2 * MARGIN_SECONDS)


def screenshot(url: str, output: Path) -> None:
    """The whole page once every graph has drawn, with Debian's Chromium."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(
                viewport={"width": PAGE_WIDTH, "height": 800}, device_scale_factor=1
            )
            page.goto(url)
            # PromConsole.Graph shows a loading image until its queries have answered.
            page.wait_for_function(
                "document.querySelectorAll('.prom_graph_loading').length === 0",
                timeout=RENDER_TIMEOUT_MS,
            )
            page.screenshot(path=str(output), full_page=True)
        finally:
            browser.close()


def draw(args: argparse.Namespace, run_dir: Path) -> None:
    env = Environment(
        args=args,
        run_dir=run_dir,
        processes=Processes(),
        databases=Databases(f"sqlite+aiosqlite:///{run_dir / 'frontdesk.db'}", None),
        frontdesk_python=args.frontdesk_venv / "bin" / "python",
        bench_python=Path(sys.executable),
    )
    token = secrets.token_urlsafe(24)
    server = Server(
        SERVER,
        "Frontdesk, SQLite, 2 workers",
        "frontdesk",
        2,
        "sqlite",
        # A spent refresh token sent again is reuse: the bench's companies choose no retry
        # window.
        (("FRONTDESK_METRICS_TOKEN", token),),
    )
    try:
        for companies in COMPANIES:
            say(f"applying {companies.relative_to(ROOT)}")
            command = [str(env.frontdesk), "companies", "apply", str(companies)]
            run(command, timeout=120, env=env.frontdesk_env("sqlite", 0))
        running = start_server(env, server)
        consoles = run_dir / "consoles"
        consoles.mkdir()
        prometheus = start_prometheus(env, running, token, ALERTS, consoles)
        window = load(env, running)
        # The last scrapes, up to the window's end.
        time.sleep(MARGIN_SECONDS + 2)
        variables = {
            "$company": ".*",
            "$__rate_interval": args.rate_interval,
            "$__range": f"{round(window.duration)}s",
        }
        shown_from = datetime.fromtimestamp(window.end - window.duration, UTC)
        shown_to = datetime.fromtimestamp(window.end, UTC)
        about = (
            f"deploy/grafana/frontdesk-dashboard.json: each panel's own queries, drawn by "
            f"Prometheus' console graphs over {args.duration} s of bench/dashboard load "
            f"(frontdesk serve, 2 workers, SQLite), {shown_from:%Y-%m-%d %H:%M:%S} to "
            f"{shown_to:%H:%M:%S} UTC (the time axis marks minutes). "
            + ", ".join(f"{name} = {value}" for name, value in variables.items())
            + "."
        )
        (consoles / "frontdesk.html").write_text(console_page(DASHBOARD, variables, window, about))
        screenshot(f"{prometheus.base_url}/consoles/frontdesk.html", args.output)
    finally:
        with shielded():
            env.processes.stop_all()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    interrupt_on_termination()
    run_dir = Path(tempfile.mkdtemp(prefix="frontdesk-dashboard-"))
    try:
        check_tools(args)
        draw(args, run_dir)
    except BenchError as error:
        say(f"failed: {error} (logs in {run_dir})")
        return 1
    except KeyboardInterrupt:
        say(f"interrupted; every process started here has been stopped (logs in {run_dir})")
        return 130
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    print(f"dashboard over the load: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
