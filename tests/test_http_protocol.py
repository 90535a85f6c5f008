"""The uvicorn protocol that sends a response's head and body in one write."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn

from frontdesk.asgi import Receive, Scope, Send
from frontdesk.http_protocol import JoiningHttpToolsProtocol, _JoiningTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"


class RecordingTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0


def joining(loop: asyncio.AbstractEventLoop) -> tuple[_JoiningTransport, RecordingTransport]:
    recording = RecordingTransport()
    return _JoiningTransport(recording, loop), recording  # type: ignore[arg-type]


async def test_a_head_and_its_body_leave_in_one_write() -> None:
    transport, recording = joining(asyncio.get_running_loop())
    transport.write(HEAD)
    assert recording.writes == []
    transport.write(b"{}")
    assert recording.writes == [HEAD + b"{}"]
    await asyncio.sleep(0)
    assert recording.writes == [HEAD + b"{}"]


async def test_a_head_no_write_follows_leaves_on_the_next_turn_of_the_loop() -> None:
    transport, recording = joining(asyncio.get_running_loop())
    transport.write(HEAD)
    await asyncio.sleep(0)
    assert recording.writes == [HEAD]
    transport.write(b"{}")
    assert recording.writes == [HEAD, b"{}"]


async def test_anything_but_a_small_final_head_is_written_at_once() -> None:
    transport, recording = joining(asyncio.get_running_loop())
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    large_head = b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * 9000 + b"\r\n\r\n"
    body_like_a_head_end = b"some body\r\n\r\n"
    for data in (interim, large_head, body_like_a_head_end, b"chunk"):
        transport.write(data)
    assert recording.writes == [interim, large_head, body_like_a_head_end, b"chunk"]


async def test_closing_sends_a_held_head_first_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    transport, recording = joining(loop)
    transport.write(HEAD)
    transport.close()
    assert recording.writes == [HEAD]
    assert recording.closed

    transport, recording = joining(loop)
    transport.write(HEAD)
    transport.abort()
    await asyncio.sleep(0)
    assert recording.writes == []
    assert recording.aborted


async def test_a_head_held_when_the_connection_is_lost_is_dropped() -> None:
    transport, recording = joining(asyncio.get_running_loop())
    transport.write(HEAD)
    recording.closed = True  # the peer went away before the loop's next turn
    await asyncio.sleep(0)
    assert recording.writes == []


async def test_the_rest_of_the_transport_is_the_wrapped_one() -> None:
    transport, _recording = joining(asyncio.get_running_loop())
    assert transport.get_write_buffer_size() == 0


# --- served for real by uvicorn with the protocol --------------------------------------


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    if scope["path"] == "/slow":
        # A streamed answer: the head must not wait for the first chunk.
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.sleep(0.5)
        await send({"type": "http.response.body", "body": b"late", "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    answer = b"got " + body
    headers = [(b"content-length", str(len(answer)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


@pytest.fixture
async def served() -> AsyncIterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        http=JoiningHttpToolsProtocol,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(500):  # uvicorn says it has started only through this flag
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start within 5 seconds"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


async def test_keep_alive_requests_are_answered_in_order(served: str) -> None:
    async with httpx.AsyncClient(base_url=served) as client:
        for number in range(50):
            response = await client.post("/", content=str(number).encode())
            assert response.status_code == 200
            assert response.text == f"got {number}"


async def test_a_streamed_head_arrives_before_its_late_body(served: str) -> None:
    async with httpx.AsyncClient(base_url=served) as client:
        started = time.monotonic()
        async with client.stream("GET", "/slow") as response:
            head_after = time.monotonic() - started
            body = await response.aread()
    assert response.status_code == 200
    assert head_after < 0.4
    assert body == b"late"


async def test_expect_100_continue_is_answered_before_the_body_is_sent(served: str) -> None:
    host, port = served.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
    await writer.drain()
    interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
    assert interim.startswith(b"HTTP/1.1 100")
    writer.write(b"hello")
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
    assert head.startswith(b"HTTP/1.1 200")
    assert await reader.readexactly(len(b"got hello")) == b"got hello"
    writer.close()


def test_frontdesk_serve_selects_the_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    from frontdesk import operations
    from frontdesk.config import Settings

    seen: dict[str, Any] = {}
    # serve() sets these for its workers; monkeypatch puts them back afterwards.
    monkeypatch.setenv("FRONTDESK_AUTO_MIGRATE", "false")
    monkeypatch.setenv("FRONTDESK_SEED_DEMO", "false")
    monkeypatch.setattr(uvicorn, "run", lambda *args, **options: seen.update(options))
    operations.serve(
        Settings(auto_migrate=False, seed_demo=False), host="127.0.0.1", port=0, workers=1
    )
    protocol = uvicorn.importer.import_from_string(seen["http"])
    assert protocol is JoiningHttpToolsProtocol
