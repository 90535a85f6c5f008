"""`frontdesk serve` stops on any number of SIGTERM and SIGINT, in any order, within its
grace (stop_guard.py), even when the server under it does not answer the stop at all; and
a request on a kept-alive connection at the stop is answered or never read."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from frontdesk.server.http_server import SHUTDOWN_GRACE_SECONDS, STOP_MARGIN_SECONDS
from tests.live.conftest import (
    START_DEADLINE,
    LiveService,
    _frontdesk_command,
    _wait_until_healthy,
    free_port,
    service_environment,
    stop_process,
)
from tests.live.test_slow_clients import head, read_answer

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.alone]

STOPS = 20
# The promise: every stop ends within the workers' grace and the supervisor's margin.
STOP_WITHIN = SHUTDOWN_GRACE_SECONDS + STOP_MARGIN_SECONDS
# What the test's own process may add to that on a busy machine.
SLACK = 2.0
# Orders of signals an operator, a terminal and a script send: Ctrl-C twice, a forwarded
# SIGTERM after the terminal's SIGINT, systemd or `timeout` after either, and three at once.
SIGNALS = (
    (signal.SIGTERM, signal.SIGINT),
    (signal.SIGINT, signal.SIGINT),
    (signal.SIGINT, signal.SIGTERM),
    (signal.SIGTERM, signal.SIGTERM),
    (signal.SIGINT, signal.SIGTERM, signal.SIGINT),
)
# A flood, back to back, lands one signal inside Granian's handler of another often enough
# to deadlock the unguarded supervisor in about every third stop.
FLOOD = (signal.SIGINT, signal.SIGTERM) * 100
FLOODED_STOPS = 5


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


def start(
    workdir: Path, port: int, *, seed_demo: bool = False
) -> tuple[subprocess.Popen[bytes], LiveService]:
    """``frontdesk serve`` with one worker on a SQLite file, started and healthy."""
    base_url = f"http://127.0.0.1:{port}"
    service = LiveService(
        backend="sqlite",
        base_url=base_url,
        log_path=workdir / f"serve-{port}.log",
        public_url=base_url,
    )
    environment = service_environment(
        base_url,
        f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}",
        {"FRONTDESK_SEED_DEMO": "true" if seed_demo else "false"},
    )
    with service.log_path.open("ab") as log:
        process = subprocess.Popen(
            [*_frontdesk_command(), "serve", "--port", str(port), "--workers", "1"],
            env=environment,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_healthy(process, service, time.monotonic() + START_DEADLINE)
    except BaseException:
        stop_process(process)
        raise
    return process, service


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (the server, its workers), from /proc."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except FileNotFoundError:
            continue
        found.extend(int(child) for child in children)
        pending.extend(int(child) for child in children)
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    # A zombie has ended; only its parent's wait is missing.
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_gone(pids: list[int], deadline: float) -> list[int]:
    """The processes of ``pids`` still alive at ``deadline`` (none, once they have all ended)."""
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def refuses(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return False
    except ConnectionRefusedError:
        return True


@contextlib.contextmanager
def stopped_at_the_end(process: subprocess.Popen[bytes]) -> Iterator[None]:
    """Whatever a failed test left running is killed, the processes under it first."""
    try:
        yield
    finally:
        if process.poll() is None:
            for pid in descendants(process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            process.kill()
            process.wait()


def test_twenty_stops_with_several_signals_each_end_within_the_grace(workdir: Path) -> None:
    """Granian's supervisor deadlocks in its own signal handler when a second signal lands
    at the wrong moment; under stop_guard it hears one, whatever arrives."""
    port = free_port()
    for stop in range(STOPS):
        process, service = start(workdir, port)
        with stopped_at_the_end(process):
            under = descendants(process.pid)
            assert len(under) >= 2, "the server and its worker run under frontdesk serve"
            flooded = stop >= STOPS - FLOODED_STOPS
            signals = FLOOD if flooded else SIGNALS[stop % len(SIGNALS)]
            # The signals' spacing is what is tested: 0 to 50 ms apart, or none.
            gap = 0.0 if flooded else (stop % 6) * 0.01
            began = time.monotonic()
            for index, number in enumerate(signals):
                if index and gap:
                    time.sleep(gap)
                process.send_signal(number)
            try:
                status = process.wait(timeout=STOP_WITHIN + SLACK)
            except subprocess.TimeoutExpired:
                pytest.fail(
                    f"stop {stop + 1} ({len(signals)} signals, {gap * 1000:.0f} ms apart)"
                    f" did not end within {STOP_WITHIN + SLACK:g} s:\n{service.output()}"
                )
            took = time.monotonic() - began
            assert status == 0, f"stop {stop + 1} exited {status}:\n{service.output()}"
            assert took < STOP_WITHIN
            assert wait_until_gone(under, time.monotonic() + SLACK) == []
            assert refuses(port)


def test_a_server_that_ignores_the_stop_is_killed_with_its_workers(workdir: Path) -> None:
    """The backstop: a supervisor that never acts on the stop (here, stopped with SIGSTOP,
    as a deadlocked one would sit) is killed with its workers once the grace is over."""
    port = free_port()
    process, service = start(workdir, port)
    with stopped_at_the_end(process):
        under = descendants(process.pid)
        [server] = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        os.kill(int(server), signal.SIGSTOP)
        began = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=STOP_WITHIN + SLACK)
        took = time.monotonic() - began
    assert status == 1
    assert STOP_WITHIN - 0.5 <= took < STOP_WITHIN + SLACK
    [killed] = [
        orjson.loads(line)
        for line in service.output().splitlines()
        if "did not stop in time" in line
    ]
    assert killed["stop_within_seconds"] == STOP_WITHIN
    assert killed["level"] == "error"
    assert wait_until_gone(under, time.monotonic() + SLACK) == []
    assert refuses(port)


PING = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})


def test_requests_on_kept_alive_connections_at_the_stop_are_answered_or_never_read(
    workdir: Path,
) -> None:
    """At the stop, a request under way is answered with ``Connection: close`` (its body
    arrives after the stop), and a request sent on an idle kept-alive connection finds it
    closed unread, or is answered, never read and dropped (RFC 9112 section 9.6)."""
    port = free_port()
    process, service = start(workdir, port, seed_demo=True)
    with stopped_at_the_end(process):
        idle = socket.create_connection(("127.0.0.1", port), timeout=STOP_WITHIN)
        idle.sendall(head(service, "GET", "/healthz"))
        assert read_answer(idle).startswith(b"HTTP/1.1 200 ")
        busy = socket.create_connection(("127.0.0.1", port), timeout=STOP_WITHIN)
        busy.sendall(demo_ping_head(service) + PING[:10])

        process.send_signal(signal.SIGTERM)
        # The worker has heard the stop once its listener is gone.
        deadline = time.monotonic() + STOP_WITHIN
        while not refuses(port):
            assert time.monotonic() < deadline, "the worker never stopped listening"
            time.sleep(0.02)

        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            idle.sendall(head(service, "GET", "/healthz"))
        on_idle = read_to_the_end(idle)
        busy.sendall(PING[10:])
        on_busy = read_to_the_end(busy)
        assert process.wait(timeout=STOP_WITHIN + SLACK) == 0

    assert on_busy.startswith(b"HTTP/1.1 200 "), on_busy
    assert b"\r\nconnection: close\r\n" in on_busy.lower()
    assert b'"result"' in on_busy
    assert on_idle == b"" or (
        on_idle.startswith(b"HTTP/1.1 200 ") and b"\r\nconnection: close\r\n" in on_idle.lower()
    ), on_idle


def demo_ping_head(service: LiveService) -> bytes:
    return head(
        service,
        "POST",
        "/v1/demo/mcp",
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Content-Length", str(len(PING))),
        ],
    )


def read_to_the_end(client: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset ends it too)."""
    received = b""
    with client, contextlib.suppress(ConnectionResetError):
        while chunk := client.recv(65536):
            received += chunk
    return received
