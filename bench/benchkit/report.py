"""From measurements to bench/RESULTS.md: the table, issues 6 and 21 targets, the profiles."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from benchkit.messages import HANDSHAKE_VERSION
from benchkit.processes import BenchError, Quiet, run
from benchkit.profiles import Profile
from benchkit.rows import Row, per
from benchkit.servers import BENCH, Environment, Running
from benchkit.systems import BATCH
from benchkit.targets import ceiling_scaling, scaling_bounds, targets
from benchkit.targets_api import api_targets

# Other CPU use (cores) during a run above which its figures count as disturbed.
DISTURBED = 0.15


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _x(value: float, base: float) -> str:
    ratio = per(value, base)
    return "-" if ratio is None else f"×{ratio:.2f}"


def _share(value: float, base: float) -> str:
    ratio = per(value, base)
    return "-" if ratio is None else f"{ratio:.3f}"


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} µs"


def results_table(rows: Sequence[Row], ceiling: Row) -> list[str]:
    lines = [
        "| scenario | server | req/s: median (min–max) | ÷ ceiling | p50 ms (÷ ceiling) "
        "| p99 ms (÷ ceiling) | RSS MB/worker (÷ ceiling) | server CPU (µs/request) "
        "| other CPU | errors |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.scenario.label} | {row.server.label} "
            f"| **{_n(row.rps)}** ({_n(row.low)}–{_n(row.high)}) | {_share(row.rps, ceiling.rps)} "
            f"| {_ms(row.p50)} ({_x(row.p50, ceiling.p50)}) "
            f"| {_ms(row.p99)} ({_x(row.p99, ceiling.p99)}) "
            f"| {row.rss:.0f} ({_x(row.rss, ceiling.rss)}) "
            f"| {row.server_cpu:.0%} ({_us(row.cpu_us)}) "
            f"| {row.other_cpu:.0%} | {row.errors} |"
        )
    return lines


def servers_table(running: Sequence[Running], rows: Sequence[Row]) -> list[str]:
    lines = [
        "| server | processes | RSS MB/worker at start | after its last run | total RSS after |",
        "|---|--:|--:|--:|--:|",
    ]
    for server in running:
        last = [row.runs[-1] for row in rows if row.server.key == server.server.key]
        final = max(last, key=lambda m: m.measured_at) if last else None
        after = f"{final.rss_worker_mb:.0f}" if final else "-"
        total = f"{final.rss_total_mb:.0f}" if final else "-"
        lines.append(
            f"| {server.server.label} | {server.processes} | {server.rss_at_start_mb:.0f} "
            f"| {after} | {total} |"
        )
    return lines


def source_state() -> str:
    """Which Frontdesk the servers run: the commit, and a digest of uncommitted changes."""
    git = ["git", "-C", str(BENCH.parent)]
    try:
        commit = run([*git, "rev-parse", "--short=12", "HEAD"], timeout=30).strip()
        changed = run([*git, "status", "--porcelain", "--", "src"], timeout=30).splitlines()
        diff = run([*git, "diff", "HEAD", "--", "src"], timeout=30)
    except (BenchError, OSError):
        return "not a git checkout"
    if not changed:
        return f"commit {commit}, src/ clean"
    digest = hashlib.sha256(diff.encode()).hexdigest()[:12]
    return f"commit {commit} with {len(changed)} uncommitted file(s) in src/ (diff {digest})"


def machine_facts(
    env: Environment, postgres_version: str | None, source: str
) -> list[tuple[str, str]]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown",
    )
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    debian = Path("/etc/debian_version")
    debian_version = debian.read_text().strip() if debian.exists() else "?"

    def first_line(command: Sequence[str]) -> str:
        try:
            return run(command, timeout=30).strip().splitlines()[0]
        except (BenchError, IndexError, OSError):
            return "unknown"

    def version(python: Path, name: str) -> str:
        code = f"import importlib.metadata as m; print(m.version({name!r}))"
        return first_line([str(python), "-c", code])

    sdk = BENCH / "node" / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    wrk_version = "unknown"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["wrk", "--version"], capture_output=True, text=True, timeout=10, check=False
        )
        wrk_version = done.stdout.split(" [")[0]
    fd, bench = env.frontdesk_python, env.bench_python
    stack = ", ".join(
        f"{name} {version(fd, name)}"
        for name in ("granian", "uvloop", "sqlalchemy", "asyncpg", "aiosqlite")
    )
    return [
        ("CPU", f"{cpu}, {os.cpu_count()} cores"),
        ("memory", f"{memory_kb / 1024 / 1024:.1f} GiB"),
        ("OS", f"Debian {debian_version}, Linux {platform.release()}"),
        ("Python", platform.python_version()),
        ("Frontdesk", f"{version(fd, 'frontdesk')}, {source}, on {stack}"),
        ("MCP Python SDK", f"mcp {version(bench, 'mcp')}, uvicorn {version(bench, 'uvicorn')}"),
        (
            "MCP TypeScript SDK",
            f"@modelcontextprotocol/sdk {json.loads(sdk.read_text())['version']}, "
            f"Node {first_line([env.args.node, '--version'])}",
        ),
        ("load generator", wrk_version),
        ("PostgreSQL", postgres_version or "not used"),
    ]


def _profile_section(found: Profile) -> list[str]:
    lines = [
        f"### {found.scenario}",
        "",
        f"{found.samples:,} samples with the GIL held; {found.main_share:.0%} in the event "
        f"loop's thread (the rest in other threads). Stacks: `{found.path.relative_to(BENCH)}` "
        "(py-spy raw format; `flamegraph.pl` or speedscope draw them).",
        "",
        "| self | function (event-loop thread) | | incl. | Frontdesk function, with callees |",
        "|--:|---|---|--:|---|",
    ]
    for index in range(max(len(found.own), len(found.ours))):
        own = found.own[index] if index < len(found.own) else ("", 0.0)
        ours = found.ours[index] if index < len(found.ours) else ("", 0.0)
        lines.append(
            f"| {own[1]:.1%} | `{own[0]}` | | {ours[1]:.1%} | `{ours[0]}` |"
            if ours[0]
            else f"| {own[1]:.1%} | `{own[0]}` | | | |"
        )
    lines += [
        "",
        "Self time by package (event-loop thread): "
        + ", ".join(f"{name} {share:.1%}" for name, share in found.packages),
    ]
    if found.threads:
        lines.append(
            "Other threads (of all samples): "
            + ", ".join(f"`{name}` {share:.1%}" for name, share in found.threads[:5])
        )
    return [*lines, ""]


@dataclass(frozen=True, slots=True)
class Report:
    started: datetime
    args: argparse.Namespace
    facts: list[tuple[str, str]]
    rows: list[Row]
    running: list[Running]
    profiles: list[Profile]
    notes: list[str]
    quiet: Quiet


def render(report: Report) -> str:
    args, rows = report.args, report.rows
    by_key = {row.scenario.key: row for row in rows}
    ceiling = by_key["ceiling"]
    command = " ".join(["bench/run", *(shlex.quote(a) for a in args.argv)])
    lines = [
        "# Benchmark results",
        "",
        "Written by `bench/run` ([README.md](README.md)); each run replaces this file.",
        "",
        f"- **Date**: {report.started:%Y-%m-%d %H:%M} UTC",
        f"- **Command**: `{command}`",
        *(f"- **{name}**: {value}" for name, value in report.facts),
        f"- **Method**: wrk, {args.connections} connections, {args.threads} "
        f"thread{'s' * (args.threads != 1)}, keep-alive, loopback; "
        f"{args.rounds} round{'s' * (args.rounds != 1)} over the {len(rows)} scenarios, each "
        "round in a rotated order; "
        f"{args.warmup} s warm-up + {args.duration} s measured per run. Figures are the "
        "median of the rounds (req/s also min–max). 1-worker servers pinned to CPU "
        f"{args.server_cpu} and wrk to CPU {args.load_cpu} (taskset).",
        f"- **Quiet machine**: before each run the bench waited (at most 60 s, "
        f"{args.quiet_wait} s in all) for the machine to be under {args.quiet_below:.0%} "
        f"busy with our servers idle; it waited {report.quiet.waited:.0f} s in all, and "
        f"{sum(b >= args.quiet_below for b in report.quiet.samples)} of "
        f"{len(report.quiet.samples)} runs started busier than that. The *other CPU* "
        "column shows what still ran beside each run.",
        "",
        "## Results",
        "",
        "Each figure also as a ratio to the bare-ASGI ceiling of this run (for req/s higher "
        "is better; for latency and memory lower is). RSS: the largest worker, after that "
        "server's last run. Server CPU: cores its processes used under load (100% = one "
        "core; well under 100% for a 1-worker server means it waited on something else), "
        "and that CPU time per request: the cost the hot path pays, less sensitive to "
        "latency than req/s. "
        "Other CPU: the machine's process time during the run (user, system, steal; "
        "interrupts, where the kernel moves loopback packets, left out) apart from the "
        "server, wrk and PostgreSQL's backends: whatever else runs on this machine. More "
        "than a few percent means the figure was disturbed.",
        "",
        *results_table(rows, ceiling),
        "",
    ]
    guest, batch = by_key.get("guest-call"), by_key.get("guest-batch")
    if guest and batch and guest.rps > 0 and batch.rps > 0:
        calls = batch.rps * BATCH
        lines += [
            f"Batches of {BATCH}: {_n(batch.rps)} requests/s = **{_n(calls)} tool calls/s**; "
            f"a call in a batch costs {guest.rps / calls:.2f} of a single-request call "
            f"({1e3 / calls:.3f} ms against {1e3 / guest.rps:.3f} ms).",
            "",
        ]
    churn = [(row, rate) for row in rows if (rate := row.pg_sessions_per_second) is not None]
    if churn:
        lines += [
            "PostgreSQL connections opened per second of load (`pg_stat_database.sessions`): "
            + ", ".join(f"{row.scenario.key} {rate:,.1f}" for row, rate in churn),
            "",
        ]
    lines += ["### Servers", "", *servers_table(report.running, rows), ""]
    found = targets(by_key) + api_targets(by_key)
    if found:
        lines += [
            "## Targets (issues 6, 21, 22 and 32)",
            "",
            "| target | measured | met |",
            "|---|---|:-:|",
        ]
        lines += [f"| {t.name} | {t.measured} | {'yes' if t.met else '**no**'} |" for t in found]
        lines.append("")
        scaling = ceiling_scaling(by_key)
        if scaling is not None:
            lines += [
                "For scale, the bare-ASGI ceiling itself gives "
                f"**{scaling:.2f}×** its 1-worker figure with 2 workers on this machine, "
                "where wrk shares the two cores with the workers.",
                "",
            ]
        bounds = scaling_bounds(by_key)
        if bounds:
            lines += [
                "What 2 workers could give at most here, were each request to cost a worker "
                "no more than it cost the single worker (its CPU per request, c), with wrk "
                "taking its own CPU per request (w, from the 2-worker runs) from the same two "
                "cores: 2c ÷ (c + w). "
                + "; ".join(
                    f"{bound.label}: c {bound.server_us:.1f} µs, w {bound.wrk_us:.1f} µs, "
                    f"at most **{bound.times:.2f}×**"
                    for bound in bounds
                )
                + ". A cheaper request lowers this bound: the target favours slower servers.",
                "",
            ]
    if report.profiles:
        lines += [
            "## Profiles",
            "",
            f"py-spy, {args.profile_seconds} s at 200 Hz with `--gil` (only samples where "
            "Python runs), on the 1-worker server under the same wrk load as the rounds. "
            "Shares are of the event-loop thread's samples; *incl.* counts a Frontdesk "
            "function whenever it is on the stack. The ceiling's `RequestResponseCycle.send` "
            "is uvicorn's two `transport.write` calls per response (on loopback they also "
            "carry the bytes to wrk). Frontdesk runs on Granian, whose I/O and HTTP parsing "
            "run in Rust threads these samples do not show: set its profile beside the "
            "server CPU per request.",
            "",
        ]
        for profile in report.profiles:
            lines += _profile_section(profile)
    lines += ["## Notes", "", *(f"- {note}" for note in report.notes), ""]
    return "\n".join(lines)


def standard_notes(rows: Sequence[Row]) -> list[str]:
    notes = [
        "Every scenario was checked with one real request before it was loaded: status 200 "
        "and the JSON-RPC reply parsed and compared (the echo text, and for 2026-07-28 "
        "requests `resultType: complete`; all 20 batch replies in order; 50 tools; for "
        "bearer scenarios a personal `whoami` call with each of the 32 "
        "customers' tokens answered that customer; for refresh, one grant returned a new "
        "pair). Under load only the status is checked: wrk counts non-2xx answers as errors. "
        "Bearer loads send the 32 customers' tokens in turn, so concurrent calls carry "
        "different tokens.",
        "Frontdesk runs as shipped: `frontdesk serve` (Granian, uvloop), access "
        "log on (JSON lines to a file), metrics and rate limits on. The bench companies set "
        "a per-caller limit of 100,000,000/minute: the limiter still counts every request, "
        "but the one load generator (one address, or 32 customers) is never refused.",
        "The MCP Python SDK runs its `MCPServer` app from `streamable_http_app(stateless_http="
        "True, json_response=True)` on uvicorn, uvloop and httptools, as the ceiling. "
        f"Requests with `MCP-Protocol-Version: {HANDSHAKE_VERSION}` take its stateless path "
        "(a transport and server session per request); 2026-07-28 requests (header and "
        "`params._meta` envelope) take its per-request path.",
        "The TS SDK runs as its stateless example does: its Express app, a new `McpServer` "
        "and `StreamableHTTPServerTransport({sessionIdGenerator: undefined, "
        "enableJsonResponse: true})` per request (a stateless transport cannot be reused).",
        "2-worker servers run on both cores and wrk shares them (2 cores: nothing can keep "
        "server and load apart), so 2-worker figures understate what two free cores give. "
        "PostgreSQL is the machine's own server; in PostgreSQL scenarios the bench moves the "
        "backends of its database (opened by the warm-up) to wrk's CPU before each measured "
        "run, as a database on a machine of its own would not share the server's core. Its "
        "CPU is counted apart (not in server CPU); backends opened during a run stay "
        "unpinned.",
    ]
    disturbed = [
        f"{row.scenario.key} ({row.other_cpu:.0%})" for row in rows if row.other_cpu > DISTURBED
    ]
    if disturbed:
        notes.append(
            f"Other work took more than {DISTURBED:.0%} of a core (median of the rounds) "
            "during " + ", ".join(disturbed) + ": those figures are low by an unknown amount; "
            "runs/latest/measurements.json has every round."
        )
    busy_wrk = [row.scenario.key for row in rows if row.wrk_cpu > 0.9]
    if busy_wrk:
        notes.append(
            "wrk used over 90% of its core in "
            + ", ".join(busy_wrk)
            + ": there the load generator may be the limit, not the server."
        )
    errors = [row.scenario.key for row in rows if row.errors]
    if errors:
        notes.append(
            "Errors (non-2xx or socket) under load in "
            + ", ".join(errors)
            + ": those figures are suspect (see runs/latest/wrk-*.txt)."
        )
    return notes
