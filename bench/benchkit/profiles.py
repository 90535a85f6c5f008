"""py-spy on a loaded server, boiled down to the frames that matter."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchkit.load import WRK_GRACE, Plan, parse_report, wrk_command
from benchkit.processes import BenchError, run, say
from benchkit.servers import Environment, Running
from benchkit.systems import Scenario

RATE = 200
_LINE_NUMBER = re.compile(r":\d+\)$")
# Frames of Frontdesk's own code (py-spy names files relative to sys.path), but not the
# start-up frames under every sample.
_OURS = ("(frontdesk/", "(frontdesk_bench_tools")
_ENTRY = (
    "(frontdesk/cli/main.py)",
    "(frontdesk/cli/operations.py)",
    "(frontdesk/__main__.py)",
)
_THREAD_ROOT = "_bootstrap (threading.py)"
# py-spy's raw format names each process of a stack as `process PID:"command line";`.
_PROCESSES = re.compile(r'^(?:process \d+:".*?"(?:;|$))+')

Shares = list[tuple[str, float]]


@dataclass(frozen=True, slots=True)
class Profile:
    scenario: str
    samples: int  # all samples with the GIL held
    main_share: float  # of those, the event loop's thread
    own: Shares  # self time, event-loop thread
    ours: Shares  # inclusive time of Frontdesk's own functions, event-loop thread
    packages: Shares  # self time by top-level package, event-loop thread
    threads: Shares  # self time in other threads
    path: Path


def _frame(frame: str) -> str:
    """``handle (frontdesk/protocol/endpoint.py:123)`` → the same without the line."""
    return _LINE_NUMBER.sub(")", frame.strip())


def _package(frame: str) -> str:
    where = frame[frame.rfind("(") + 1 : -1]
    return where.split("/", 1)[0].removesuffix(".py") if "/" in where else where.removesuffix(".py")


def _is_ours(frame: str) -> bool:
    return any(mark in frame for mark in _OURS) and not frame.endswith(_ENTRY)


def summarise(scenario: str, path: Path, top: int) -> Profile:
    own: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    main = other = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        # With --subprocesses each stack starts with its processes, whose command lines
        # may hold parentheses and semicolons too.
        stack = _PROCESSES.sub("", stack)
        frames = [_frame(frame) for frame in stack.split(";") if "(" in frame]
        if not frames:
            continue
        if frames[0] == _THREAD_ROOT:
            other += count
            threads[frames[-1]] += count
            continue
        main += count
        own[frames[-1]] += count
        packages[_package(frames[-1])] += count
        for name in {frame for frame in frames if _is_ours(frame)}:
            ours[name] += count

    def shares(counter: Counter[str], of: int) -> Shares:
        return [(name, n / of) for name, n in counter.most_common(top)] if of else []

    total = main + other
    return Profile(
        scenario=scenario,
        samples=total,
        main_share=main / total if total else 0.0,
        own=shares(own, main),
        ours=shares(ours, main),
        packages=shares(packages, main),
        threads=shares(threads, total),
        path=path,
    )


def profile(env: Environment, scenario: Scenario, running: Running, plan: Plan) -> Profile | None:
    """Sample the server with py-spy (only when it holds the GIL: Python at work) while
    wrk loads it as in the rounds. (Node has no py-spy: the TS SDK is not profiled.)"""
    if running.server.kind == "mcp-typescript":
        return None
    args = env.args
    seconds = args.profile_seconds
    load_seconds = seconds + 3
    plan.prepare(args.connections)
    out = env.run_dir / f"profile-{scenario.key}.collapsed"
    log = env.run_dir / f"profile-{scenario.key}-wrk.txt"
    command = wrk_command(plan, args, env.load_cpus(running.server), load_seconds)
    pyspy = [str(env.bench_python.parent / "py-spy"), "record", "--pid", str(running.pid)]
    pyspy += ["--duration", str(seconds), "--rate", str(RATE), "--gil"]
    pyspy += ["--format", "raw", "--output", str(out)]
    if running.processes > 1:
        # The workers are the supervisor's children: Granian has one even for one worker.
        pyspy.append("--subprocesses")
    say(f"profiling {scenario.key} with py-spy for {seconds}s")
    with log.open("wb") as output:
        load = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, **plan.env}
        )
        try:
            time.sleep(1)  # the load first, then the samples
            run(pyspy, timeout=seconds + 60)
        except BaseException:
            load.kill()
            raise
        finally:
            try:
                load.wait(timeout=load_seconds + WRK_GRACE)
            except subprocess.TimeoutExpired:
                load.kill()
                load.wait()
    # The tokens handed to this load are spent whatever it reports; only the count is lost.
    with contextlib.suppress(BenchError, KeyError, ValueError):
        plan.settle(parse_report(log.read_text()))
    return summarise(scenario.key, out, args.profile_top) if out.exists() else None
