"""`frontdesk serve --workers 2` on one SQLite file: a revoked access token is refused at
once by every worker, not only by the one that took the revocation. SQLite sends no
notices, so each worker must read the token's row on every call (store.sqlite_lookups);
a worker that remembered a token found live would serve it on after the revocation."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.live.conftest import start_service
from tests.live.test_workers import (
    ESTABLISHED,
    socket_inodes,
    wait_until_every_worker_listens,
)
from tests.oauth import flows

pytestmark = pytest.mark.live

# Calls on fresh connections per round: both workers take some (all going to one worker
# has a chance of 2 in 2**24).
CALLS = 24
TIMEOUT = 10.0


async def test_a_revoked_token_is_refused_at_once_by_every_worker(tmp_path: Path) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    running = start_service("sqlite", database_url, tmp_path, workers=2)
    try:
        port = int(running.service.base_url.rsplit(":", 1)[1])
        workers = wait_until_every_worker_listens(running.process.pid, port, count=2)
        async with httpx.AsyncClient(base_url=running.service.base_url, timeout=TIMEOUT) as client:
            tokens = await flows.obtain_tokens(client)

            # Before: every call is served, and both workers serve some, each having read
            # (and kept, were it to keep anything) the token as live.
            before = [
                whoami_on_fresh_connection(port, tokens.access, workers) for _ in range(CALLS)
            ]
            assert [status for status, _ in before] == [200] * CALLS
            assert {worker for _, worker in before} == set(workers)

            revoked = await flows.revoke(client, tokens.access, tokens.client_id)
            assert revoked.status_code == 200, revoked.text

        # After: the first call on each worker, and every one after it, is refused.
        after = [whoami_on_fresh_connection(port, tokens.access, workers) for _ in range(CALLS)]
        assert [status for status, _ in after] == [401] * CALLS
        assert {worker for _, worker in after} == set(workers)
    finally:
        assert running.stop(), running.service.output()


def whoami_on_fresh_connection(port: int, token: str, workers: list[int]) -> tuple[int, int]:
    """Call the personal tool ``whoami`` on a new connection: the answer's status, and the
    worker that served it (read off /proc while the connection is still open)."""
    body = json.dumps(flows.tool_call("whoami")).encode()
    request = (
        f"POST /v1/{flows.TENANT}/mcp HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as connection:
        # Read before the answer: a refusal given before the body was read closes the
        # connection with it (frontdesk.web.body_deadline), and its server end goes with it.
        worker = accepting_worker(port, connection.getsockname()[1], workers)
        connection.sendall(request)
        status, answer = read_answer(connection.recv)
        if status == 200:
            result = json.loads(answer)["result"]
            assert result["isError"] is False, result
            assert result["structuredContent"]["subject"] == "dev:peter@initech.example"
    return status, worker


def accepting_worker(port: int, client_port: int, workers: list[int]) -> int:
    """The worker that accepted the connection from ``client_port``, once it has."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        found = serving_workers(port, client_port, workers)
        if found:
            [worker] = found
            return worker
        assert time.monotonic() < deadline, f"no worker accepted the connection {client_port}"
        time.sleep(0.01)


def read_answer(receive: Callable[[int], bytes]) -> tuple[int, bytes]:
    """The status and body of one HTTP/1.1 answer with a Content-Length."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = receive(65536)
        assert chunk, f"connection closed after {answer!r}"
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    [length] = [
        int(line.split(b":", 1)[1]) for line in lines if line.lower().startswith(b"content-length:")
    ]
    while len(body) < length:
        chunk = receive(65536)
        assert chunk, f"connection closed after {answer!r}"
        body += chunk
    return int(lines[0].split()[1]), body


def serving_workers(port: int, client_port: int, workers: list[int]) -> list[int]:
    """The worker holding the server's end of the connection from ``client_port`` (none
    before it is accepted)."""
    server_ends = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        remote_port = int(fields[2].rsplit(":", 1)[1], 16)
        if local_port == port and remote_port == client_port and fields[3] == ESTABLISHED:
            server_ends.add(int(fields[9]))
    return [pid for pid in workers if socket_inodes(pid) & server_ends]
