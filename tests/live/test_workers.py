"""`frontdesk serve --workers 2` as a real process: each worker listens on a socket of its
own (``SO_REUSEPORT``, as the HTTP server binds them: http_server.py), and connections
opened together are spread over the workers rather than all taken by the first to wake.
Read off /proc, as `ss -tlnp` would show it."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

from tests.live.conftest import start_service
from tests.support.processes import parent_of

CONNECTIONS = 32
LISTEN = "0A"
ESTABLISHED = "01"
START_DEADLINE = 30.0


def test_connections_opened_together_reach_every_worker(tmp_path: Path) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    running = start_service("sqlite", database_url, tmp_path, workers=2)
    try:
        port = int(running.service.base_url.rsplit(":", 1)[1])
        workers = wait_until_every_worker_listens(running.process.pid, port, count=2)
        answered = [answered_connection(port) for _ in range(CONNECTIONS)]
        clients = [client for client, _ in answered]
        try:
            sockets = tcp_sockets(port)
            held = {pid: socket_inodes(pid) for pid in [running.process.pid, *workers]}
        finally:
            for client in clients:
                client.close()
        listening = {pid: [i for i in held[pid] if sockets.get(i) == LISTEN] for pid in held}
        served = {pid: [i for i in held[pid] if sockets.get(i) == ESTABLISHED] for pid in held}

        # One listening socket per worker, none in the supervisor: no connection can wait
        # in a queue that nobody accepts from.
        assert listening.pop(running.process.pid) == []
        assert [len(inodes) for inodes in listening.values()] == [1, 1]
        assert len({inode for inodes in listening.values() for inode in inodes}) == 2
        assert served.pop(running.process.pid) == []
        # Spread by a hash of each connection's addresses: both workers serve some (one
        # taking all 32 has a chance of 2 in 2**32).
        counts = [len(inodes) for inodes in served.values()]
        assert sum(counts) == CONNECTIONS
        assert min(counts) > 0, counts
        # Each worker a fresh interpreter, not a fork sharing the supervisor's state: two
        # workers would otherwise hand out the same request ids.
        assert len({request_id for _, request_id in answered}) == CONNECTIONS
    finally:
        assert running.stop(), running.service.output()


def test_workers_stop_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    """SIGKILL leaves the supervisor no chance to stop its workers: the kernel tells them
    (http_server.py), so none serves on, orphaned, on a port the next start binds too."""
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    # The workers' metrics directory, which a killed supervisor cannot remove, in tmp_path.
    metrics_dir = {"FRONTDESK_METRICS_DIR": str(tmp_path)}
    running = start_service("sqlite", database_url, tmp_path, workers=2, extra_env=metrics_dir)
    port = int(running.service.base_url.rsplit(":", 1)[1])
    workers = wait_until_every_worker_listens(running.process.pid, port, count=2)

    running.process.send_signal(signal.SIGKILL)
    running.process.wait(timeout=START_DEADLINE)

    deadline = time.monotonic() + START_DEADLINE
    while any(is_running(pid) for pid in workers):
        assert time.monotonic() < deadline, running.service.output()
        time.sleep(0.1)
    assert LISTEN not in tcp_sockets(port).values()

    # The killed supervisor could not remove its workers' metrics directory; the next start
    # in the same place does (metrics_files.py), and removes its own when it stops.
    left = list(tmp_path.glob("frontdesk-metrics-*"))
    assert len(left) == 1
    assert left[0].name.startswith(f"frontdesk-metrics-{running.process.pid}-")
    again = start_service("sqlite", database_url, tmp_path, workers=1, extra_env=metrics_dir)
    try:
        assert not left[0].exists()
    finally:
        assert again.stop(), again.service.output()
    assert list(tmp_path.glob("frontdesk-metrics-*")) == []


def is_running(pid: int) -> bool:
    """Alive, and not a zombie waiting for a parent to collect it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_every_worker_listens(supervisor: int, port: int, count: int) -> list[int]:
    """The workers, once each listens: /healthz answering means only that one does."""
    deadline = time.monotonic() + START_DEADLINE
    while True:
        workers = worker_pids(supervisor)
        sockets = tcp_sockets(port)
        listening = [
            pid
            for pid in workers
            if any(sockets.get(inode) == LISTEN for inode in socket_inodes(pid))
        ]
        if len(listening) == count:
            return listening
        assert time.monotonic() < deadline, f"workers listening: {listening} of {workers}"
        time.sleep(0.1)


def answered_connection(port: int) -> tuple[socket.socket, bytes]:
    """A keep-alive connection that has had one request answered: accepted by a worker;
    with the answer's request id."""
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = client.recv(4096)
        assert chunk, f"connection closed after {answer!r}"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    [request_id] = [
        line.split(b":", 1)[1].strip()
        for line in answer.split(b"\r\n")
        if line.lower().startswith(b"x-request-id:")
    ]
    return client, request_id


def worker_pids(serve: int) -> list[int]:
    """The server's workers: the processes multiprocessing spawned (not its resource
    tracker) under Granian's supervisor, the child of ``frontdesk serve`` (stop_guard.py)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        supervisor = parent_of(int(entry.name))
        if b"spawn_main" in command and supervisor and parent_of(supervisor) == serve:
            found.append(int(entry.name))
    return found


def socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    return inodes


def tcp_sockets(port: int) -> dict[int, str]:
    """IPv4 TCP sockets whose local port is ``port``: inode to state (hex, as the kernel
    writes it)."""
    found = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        if local_port == port:
            found[int(fields[9])] = fields[3]
    return found
