"""Starting and stopping processes, and what /proc says about them and the machine."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STOP_TIMEOUT = 10.0


class BenchError(Exception):
    """The run cannot go on: a tool is missing, a server did not start, a check failed."""


def say(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Processes:
    """Every long-running process this run starts, each in its own process group, so
    stopping one also stops what it forked (uvicorn's workers) and nothing else."""

    def __init__(self) -> None:
        self._started: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, command: Sequence[str], log: Path, **options: Any) -> int:
        say(f"starting {name}: {shlex.join(command)}")
        with log.open("ab") as output:
            process = subprocess.Popen(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                **options,
            )
        self._started.append((name, process))
        return process.pid

    def alive(self, pid: int) -> bool:
        return any(p.pid == pid and p.poll() is None for _, p in self._started)

    def stop_all(self) -> None:
        for name, process in reversed(self._started):
            if process.poll() is None:
                say(f"stopping {name} (pid {process.pid})")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for _, process in self._started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
        for name, process in self._started:
            # Whatever is left of the group (a worker that ignored SIGTERM) goes now.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            if process.poll() is None:
                say(f"{name} (pid {process.pid}) needed SIGKILL")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=STOP_TIMEOUT)
        self._started.clear()


def interrupt_on_termination() -> None:
    """SIGTERM and SIGHUP end the run as Ctrl-C does, through the clean-up that stops every
    process it started."""

    def interrupted(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Clean-up runs to its end: a second Ctrl-C must not leave servers behind."""
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(command: Sequence[str], *, timeout: float, **options: Any) -> str:
    """Run a short command to completion: its stdout, or BenchError with its output."""
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=False, **options
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{shlex.join(command)} took longer than {timeout:.0f}s") from None
    if done.returncode != 0:
        output = (done.stderr.strip() + "\n" + done.stdout.strip()).strip()
        raise BenchError(f"{shlex.join(command)} failed ({done.returncode}):\n{output}")
    return str(done.stdout)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def pin(cpus: str) -> list[str]:
    return ["taskset", "-c", cpus]


# /proc ------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def process_tree(pid: int) -> list[int]:
    tree, found, queue = _children(), [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        queue.extend(tree.get(current, []))
    return found


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Memory:
    total_mb: float
    worker_mb: float  # the largest worker (the whole process when there is only one)
    processes: int


def memory_of(pid: int) -> Memory:
    pids = process_tree(pid)
    rss = {p: _rss_mb(p) for p in pids}
    # uvicorn's and Granian's workers are multiprocessing children of the supervisor.
    workers = [p for p in pids if "spawn_main" in _cmdline(p)] or [pid]
    return Memory(sum(rss.values()), max(rss.get(p, 0.0) for p in workers), len(pids))


def tree_cpu_seconds(pid: int) -> float:
    return sum(_cpu_seconds(p) for p in process_tree(pid))


def machine_cpu_seconds() -> float:
    """CPU time the whole machine spent in processes since boot (user, nice, system, and
    steal by the hypervisor): not idle, and not interrupts, where the kernel moves
    loopback packets without charging any process."""
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = (
        int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:9]
    )
    return (user + nice + system + steal) / os.sysconf("SC_CLK_TCK")


def reaped_cpu_seconds(pid: int) -> float:
    """CPU time of the children ``pid`` has waited for: how PostgreSQL's postmaster keeps
    the time of backends that have already exited."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def move_to_cpus(pids: Iterable[int], cpus: str) -> int:
    """Pin running processes to ``cpus`` ("1" or "0,1"); how many could be moved."""
    wanted = {int(cpu) for cpu in cpus.split(",")}
    moved = 0
    for pid in pids:
        try:
            os.sched_setaffinity(pid, wanted)
        except (ProcessLookupError, PermissionError):
            continue
        moved += 1
    return moved


def cpu_seconds_of_matching(marker: str) -> dict[int, float]:
    """CPU time of every process whose command line holds ``marker``, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and marker in _cmdline(int(entry.name)):
            found[int(entry.name)] = _cpu_seconds(int(entry.name))
    return found


def busy_fraction(seconds: float = 1.0) -> float:
    """How busy the whole machine is (0-1 of all cores) over a short sample."""

    def sample() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        return sum(values), values[3] + values[4]

    total_before, idle_before = sample()
    time.sleep(seconds)
    total_after, idle_after = sample()
    total = total_after - total_before
    return 0.0 if total <= 0 else 1 - (idle_after - idle_before) / total


class Quiet:
    """Waiting for the machine to be idle before each run, within one budget for the
    whole run: other work on these two cores would land in the figures."""

    def __init__(self, threshold: float, budget: float) -> None:
        self.threshold = threshold
        self.budget = budget
        self.waited = 0.0
        self.samples: list[float] = []

    def wait(self, before: str, limit: float | None = None) -> float:
        """The machine's busy share once it is quiet, or when the wait is over."""
        started = time.monotonic()
        allowed = min(self.budget - self.waited, limit if limit is not None else self.budget)
        busy = busy_fraction(1.0)
        while busy >= self.threshold and time.monotonic() - started < allowed:
            say(f"machine {busy:.0%} busy before {before}; waiting for under {self.threshold:.0%}")
            time.sleep(3)
            busy = busy_fraction(1.0)
        self.waited += time.monotonic() - started
        self.samples.append(busy)
        return busy
