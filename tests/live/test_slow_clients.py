"""`frontdesk serve` cuts slow and oversized clients off (http_server.py, body_deadline.py):
raw sockets against the real process, its limits set short through the environment so
that each test takes seconds."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import orjson
import pytest

from tests.live.conftest import LiveService, running_service

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.alone]

HEADER_TIMEOUT = 2.0
BODY_TIMEOUT = 4.0
MAX_HEADER_BYTES = 8192
CONNECTIONS = 3
# What a cut-off may take beyond its limit on a busy machine (the body's watchdog alone
# ticks every 50 ms).
SLACK = 2.0
DRIP_INTERVAL = 0.25

TOOLS_LIST = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    workdir = tmp_path_factory.mktemp("slow-clients")
    limits = {
        "FRONTDESK_HEADER_READ_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
        "FRONTDESK_BODY_READ_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
        "FRONTDESK_MAX_HEADER_BYTES": str(MAX_HEADER_BYTES),
        "FRONTDESK_MAX_CONNECTIONS_PER_WORKER": str(CONNECTIONS),
    }
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    with running_service("sqlite", database_url, workdir, extra_env=limits) as running:
        yield running


def test_a_request_within_every_limit_is_answered(service: LiveService) -> None:
    """A head just under the cap, and an MCP call whose body comes at once, are answered."""
    with connect(service) as client:
        padding = MAX_HEADER_BYTES - 512
        client.sendall(head(service, "GET", "/healthz", [("X-Padding", "a" * padding)]))
        assert read_answer(client).startswith(b"HTTP/1.1 200 ")

        client.sendall(mcp_head(service, len(TOOLS_LIST)) + TOOLS_LIST)
        answer = read_answer(client)
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    assert b'"tools"' in answer


def test_a_second_host_reaches_the_edge_and_is_refused(service: LiveService) -> None:
    """Granian hands every Host field on, over RSGI too, so the edge's check of RFC 9112
    section 3.2 holds on the real server: two Hosts are refused even when both are ours."""
    host = service.base_url.removeprefix("http://")
    with connect(service) as client:
        client.sendall(head(service, "GET", "/healthz", [("Host", host)]))
        answer = read_answer(client)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert answer.endswith(b"Invalid host header"), answer


def test_a_head_past_the_cap_is_answered_431_and_the_connection_closed(
    service: LiveService,
) -> None:
    """RFC 6585 section 5: request header fields too large."""
    with connect(service) as client:
        client.sendall(head(service, "GET", "/healthz", [("X-Padding", "a" * MAX_HEADER_BYTES)]))
        answer, closed_after = read_until_closed(client, SLACK)
    assert answer.startswith(b"HTTP/1.1 431 "), answer
    assert closed_after < SLACK


def test_a_head_dripped_slower_than_the_header_timeout_is_cut_off(service: LiveService) -> None:
    """A byte every quarter second: the head would take far longer than its timeout."""
    with connect(service) as client:
        whole = head(service, "GET", "/healthz", [("X-Padding", "a" * 100)])
        closed_after = drip_until_closed(client, whole)
    assert HEADER_TIMEOUT - 0.5 < closed_after < HEADER_TIMEOUT + SLACK


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(
    service: LiveService,
) -> None:
    with connect(service) as client:
        answer, closed_after = read_until_closed(client, HEADER_TIMEOUT + SLACK)
    assert answer == b""
    assert HEADER_TIMEOUT - 0.5 < closed_after < HEADER_TIMEOUT + SLACK


def test_a_connection_idle_after_its_answer_is_closed_after_the_header_timeout(
    service: LiveService,
) -> None:
    """The wait for the next request's head is the keep-alive timeout too."""
    with connect(service) as client:
        client.sendall(head(service, "GET", "/healthz"))
        assert read_answer(client).startswith(b"HTTP/1.1 200 ")
        answer, closed_after = read_until_closed(client, HEADER_TIMEOUT + SLACK)
    assert answer == b""
    assert HEADER_TIMEOUT - 0.5 < closed_after < HEADER_TIMEOUT + SLACK


def test_a_body_dripped_past_the_body_timeout_is_answered_408_and_cut_off(
    service: LiveService,
) -> None:
    """RFC 9110 section 15.5.9: 408, and the connection closed."""
    with connect(service) as client:
        started = time.monotonic()
        client.sendall(mcp_head(service, len(TOOLS_LIST) * 100))
        drip_until_closed(client, TOOLS_LIST * 100)
        answer, _ = read_until_closed(client, SLACK)
        closed_after = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"connection: close" in answer.lower()
    assert BODY_TIMEOUT - 0.5 < closed_after < BODY_TIMEOUT + SLACK


def test_a_body_that_never_comes_is_answered_408_on_a_framework_route(
    service: LiveService,
) -> None:
    """The token endpoint (initech signs customers in) reads its form through Starlette:
    the same deadline holds."""
    with connect(service) as client:
        started = time.monotonic()
        client.sendall(
            head(
                service,
                "POST",
                "/v1/initech/oauth/token",
                [("Content-Type", "application/x-www-form-urlencoded"), ("Content-Length", "64")],
            )
            + b"grant_type="
        )
        answer, _ = read_until_closed(client, BODY_TIMEOUT + SLACK)
        closed_after = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert BODY_TIMEOUT - 0.5 < closed_after < BODY_TIMEOUT + SLACK
    # Logged as what the client was told, not as the framework's reaction to the
    # disconnection the application was told of.
    logged = '"path":"/v1/initech/oauth/token","status":408'
    deadline = time.monotonic() + SLACK
    while logged not in service.output():
        assert time.monotonic() < deadline, service.output()
        time.sleep(0.05)


def test_a_slow_body_within_its_deadline_is_answered(service: LiveService) -> None:
    """Reading a body longer than the header timeout cuts nothing off: that timeout ends
    with the head."""
    pieces = 8
    interval = (HEADER_TIMEOUT + 0.5) / pieces
    size = -(-len(TOOLS_LIST) // pieces)
    with connect(service) as client:
        client.sendall(mcp_head(service, len(TOOLS_LIST)))
        for start in range(0, len(TOOLS_LIST), size):
            time.sleep(interval)
            client.sendall(TOOLS_LIST[start : start + size])
        answer = read_answer(client)
    assert answer.startswith(b"HTTP/1.1 200 "), answer


def test_connections_past_the_bound_wait_until_one_ends(service: LiveService) -> None:
    """The worker accepts no more than its bound; the next connection waits in the listen
    queue, and is served as soon as one of the others ends."""
    held = [connect(service) for _ in range(CONNECTIONS)]
    try:
        for client in held:
            client.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head under way holds its place
        with connect(service) as waiting:
            waiting.sendall(head(service, "GET", "/healthz"))
            # Well within the held connections' header timeout.
            assert not readable(waiting, HEADER_TIMEOUT / 2)
            held.pop().close()
            assert readable(waiting, SLACK)
            assert read_answer(waiting).startswith(b"HTTP/1.1 200 ")
    finally:
        for client in held:
            client.close()


def connect(service: LiveService) -> socket.socket:
    host, port = service.base_url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=HEADER_TIMEOUT + SLACK)


def head(
    service: LiveService, method: str, path: str, fields: list[tuple[str, str]] | None = None
) -> bytes:
    host = service.base_url.removeprefix("http://")
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in fields or []]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def mcp_head(service: LiveService, length: int) -> bytes:
    return head(
        service,
        "POST",
        "/v1/acme/mcp",
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Content-Length", str(length)),
        ],
    )


def read_answer(client: socket.socket) -> bytes:
    """One whole answer (its Content-Length read) on a connection kept open."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = client.recv(65536)
        assert chunk, f"closed after {answer!r}"
        answer += chunk
    head_end = answer.index(b"\r\n\r\n") + 4
    length = 0
    for line in answer[:head_end].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(answer) < head_end + length:
        chunk = client.recv(65536)
        assert chunk, f"closed after {answer!r}"
        answer += chunk
    return answer


def read_until_closed(client: socket.socket, within: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and how long that took."""
    started = time.monotonic()
    answer = b""
    while True:
        left = within - (time.monotonic() - started)
        assert left > 0, f"still open after {within:g}s, having sent {answer!r}"
        client.settimeout(left)
        try:
            chunk = client.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return answer, time.monotonic() - started
        answer += chunk


def drip_until_closed(client: socket.socket, data: bytes) -> float:
    """Send ``data`` a byte every DRIP_INTERVAL until the server closes the connection
    (what it answered stays unread); how long after the first byte that was."""
    started = time.monotonic()
    for byte in data:
        try:
            client.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - started
        if readable(client, DRIP_INTERVAL):
            return time.monotonic() - started
    pytest.fail(f"the whole of {len(data)} bytes went through, a byte every {DRIP_INTERVAL}s")


def readable(client: socket.socket, within: float) -> bool:
    """Whether the server sent something, or closed, within ``within`` seconds."""
    ready, _, _ = select.select([client], [], [], within)
    return bool(ready)
