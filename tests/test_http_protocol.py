"""The HTTP protocol frontdesk serve runs: uvicorn's, with our request-response cycle."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from uvicorn.server import ServerState

from frontdesk.asgi import Receive, Scope, Send
from frontdesk.http_protocol import FrontdeskHttpProtocol


class RecordingTransport:
    """The socket side of one connection: what the protocol writes, and whether it closed."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def connected(
    application: Any, keep_alive_seconds: float = 5
) -> tuple[FrontdeskHttpProtocol, RecordingTransport]:
    """The protocol as uvicorn makes it for a connection, over a recording transport."""
    config = uvicorn.Config(
        application,
        lifespan="off",
        log_level="critical",
        timeout_keep_alive=keep_alive_seconds,  # type: ignore[arg-type]
    )
    config.load()
    protocol = FrontdeskHttpProtocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    transport = RecordingTransport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    return protocol, transport


def answering(*messages: dict[str, Any], pause: bool = False) -> Any:
    """An app that reads the body, then sends ``messages``; with ``pause``, it lets the
    event loop turn between the response's start and its body."""

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        while (await receive()).get("more_body"):
            pass
        for number, message in enumerate(messages):
            if pause and number == 1:
                await asyncio.sleep(0)
            await send(message)

    return application


def start(status: int = 200, *headers: tuple[bytes, bytes]) -> dict[str, Any]:
    return {"type": "http.response.start", "status": status, "headers": list(headers)}


def body(data: bytes, more: bool = False) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": more}


async def exchanged(application: Any, request: bytes) -> RecordingTransport:
    protocol, transport = await connected(application)
    protocol.data_received(request)
    for _ in range(5):  # the app's task, then a turn for anything scheduled after it
        await asyncio.sleep(0)
    return transport


POST = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
LENGTH_2 = (b"content-length", b"2")


async def test_a_head_and_its_body_leave_in_one_write() -> None:
    transport = await exchanged(answering(start(200, LENGTH_2), body(b"ok")), POST)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
    assert not transport.closed


async def test_a_head_whose_body_is_late_leaves_on_the_next_turn_of_the_loop() -> None:
    transport = await exchanged(answering(start(200, LENGTH_2), body(b"ok"), pause=True), POST)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n", b"ok"]


async def test_heads_waiting_on_several_connections_all_leave_on_the_next_turn() -> None:
    application = answering(start(200, LENGTH_2), body(b"ok"), pause=True)
    connections = [await connected(application) for _ in range(3)]
    for protocol, _ in connections:
        protocol.data_received(POST)
    await asyncio.sleep(0)  # each app runs and starts its response, then waits a turn
    assert all(not transport.writes for _, transport in connections)
    await asyncio.sleep(0)
    for _, transport in connections:
        assert transport.writes[0] == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


OK_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


def answering_and_looking(
    transports: list[RecordingTransport], seen: list[int], wait_for: asyncio.Future[None] | None
) -> Any:
    """An app that answers (after ``wait_for``, if given), then notes how many answers of
    ``transports`` have been written by then."""

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        if wait_for is not None:
            await wait_for
        await send(start(200, LENGTH_2))
        await send(body(b"ok"))
        seen.append(sum(len(transport.writes) for transport in transports))

    return application


async def test_a_lone_answer_leaves_the_moment_it_is_finished() -> None:
    seen: list[int] = []
    transports: list[RecordingTransport] = []
    protocol, transport = await connected(answering_and_looking(transports, seen, None))
    transports.append(transport)
    protocol.data_received(POST)
    await asyncio.sleep(0)
    assert seen == [1]
    assert transport.writes == [OK_ANSWER]


async def test_answers_finished_together_leave_together_once_the_last_is_done() -> None:
    seen: list[int] = []
    transports: list[RecordingTransport] = []
    application = answering_and_looking(transports, seen, None)
    connections = [await connected(application) for _ in range(3)]
    transports.extend(transport for _, transport in connections)
    for protocol, _ in connections:
        protocol.data_received(POST)
    await asyncio.sleep(0)  # all three apps run in this turn
    assert seen == [0, 0, 3]
    assert all(transport.writes == [OK_ANSWER] for transport in transports)


async def test_an_answer_leaves_early_in_the_next_turn_while_others_still_wait() -> None:
    seen: list[int] = []
    transports: list[RecordingTransport] = []
    database = asyncio.get_running_loop().create_future()
    waiting, waiting_transport = await connected(answering_and_looking(transports, seen, database))
    quick, quick_transport = await connected(answering_and_looking(transports, seen, None))
    transports.extend([waiting_transport, quick_transport])
    waiting.data_received(POST)
    quick.data_received(POST)
    await asyncio.sleep(0)  # the quick app answers; the other still waits
    assert seen == [0]
    await asyncio.sleep(0)
    assert quick_transport.writes == [OK_ANSWER]
    database.set_result(None)
    await asyncio.sleep(0)
    assert seen == [0, 2]
    assert waiting_transport.writes == [OK_ANSWER]


async def answered_but_unsent() -> tuple[FrontdeskHttpProtocol, RecordingTransport]:
    """A connection whose answer waits in the outbox, because another connection's request
    is still under way (it never ends)."""
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    other, _ = await connected(answering_and_looking([], [], never))
    other.data_received(POST)
    protocol, transport = await connected(answering(start(200, LENGTH_2), body(b"ok")))
    protocol.data_received(POST)
    await asyncio.sleep(0)
    assert not transport.writes
    return protocol, transport


async def test_an_answer_in_the_outbox_goes_before_what_new_data_makes_uvicorn_write() -> None:
    protocol, transport = await answered_but_unsent()
    protocol.data_received(b"not http at all\r\n\r\n")  # uvicorn answers 400 at once
    assert transport.writes[0] == OK_ANSWER
    assert transport.writes[1].startswith(b"HTTP/1.1 400")
    await asyncio.sleep(0)
    assert len(transport.writes) == 2


async def test_an_answer_in_the_outbox_is_written_before_a_shutdown_closes() -> None:
    protocol, transport = await answered_but_unsent()
    protocol.shutdown()
    assert transport.writes == [OK_ANSWER]
    assert transport.closed


async def test_a_request_leaves_the_servers_tasks_once_answered_or_failed() -> None:
    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("boom")

    for application in (answering(start(200, LENGTH_2), body(b"ok")), failing):
        protocol, _ = await connected(application)
        protocol.data_received(POST)
        assert len(protocol.tasks) == 1
        await asyncio.sleep(0)
        assert not protocol.tasks


async def test_a_body_of_unknown_length_is_sent_in_chunks() -> None:
    transport = await exchanged(answering(start(), body(b"ab", more=True), body(b"c")), POST)
    assert b"".join(transport.writes) == (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n"
    )


async def test_a_head_request_gets_the_head_only() -> None:
    head = b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
    transport = await exchanged(answering(start(200, LENGTH_2), body(b"ok")), head)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"]


async def test_http_1_0_and_connection_close_end_the_connection_after_the_answer() -> None:
    old = b"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"
    transport = await exchanged(answering(start(200, LENGTH_2), body(b"ok")), old)
    assert transport.writes == [
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
    ]
    assert transport.closed

    closing = answering(start(200, LENGTH_2, (b"connection", b"close")), body(b"ok"))
    transport = await exchanged(closing, POST)
    assert transport.writes == [
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
    ]
    assert transport.closed


@pytest.mark.parametrize(
    "bad",
    [
        (b"x-note", b"one\r\nset-cookie: stolen=1"),
        (b"x-note", b"nul\x00"),
        (b"bad name", b"value"),
        (b"x:colon", b"value"),
    ],
)
async def test_a_header_that_could_split_the_response_is_never_written(
    bad: tuple[bytes, bytes],
) -> None:
    transport = await exchanged(answering(start(200, LENGTH_2, bad), body(b"ok")), POST)
    written = b"".join(transport.writes)
    assert written.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
    assert bad[1] not in written
    assert transport.closed


async def test_a_body_longer_or_shorter_than_its_length_is_cut_off() -> None:
    transport = await exchanged(answering(start(200, LENGTH_2), body(b"toolong")), POST)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"]
    assert transport.closed
    # Too short: the client sees the connection end before the length it was promised.
    transport = await exchanged(answering(start(200, LENGTH_2), body(b"k")), POST)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nk"]
    assert transport.closed


async def test_a_body_that_comes_in_pieces_is_received_in_pieces() -> None:
    received: list[Any] = []

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            received.append(await receive())
            if not received[-1]["more_body"]:
                break
        await send(start(200, LENGTH_2))
        await send(body(b"ok"))

    protocol, transport = await connected(application)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nabc")
    await asyncio.sleep(0)
    protocol.data_received(b"def")
    for _ in range(3):
        await asyncio.sleep(0)
    assert b"".join(message["body"] for message in received) == b"abcdef"
    assert received[-1]["more_body"] is False
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]


async def test_a_lost_connection_is_a_disconnect_for_an_app_still_reading() -> None:
    received: list[Any] = []

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        received.append(await receive())
        received.append(await receive())

    protocol, transport = await connected(application)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nabc")
    await asyncio.sleep(0)
    protocol.connection_lost(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert [message["type"] for message in received] == ["http.request", "http.disconnect"]
    assert transport.writes == []


async def test_a_connection_idle_for_the_keep_alive_timeout_is_closed() -> None:
    protocol, transport = await connected(
        answering(start(200, LENGTH_2), body(b"ok")), keep_alive_seconds=0.2
    )
    for _ in range(4):  # a request every 0.1 s: never idle for 0.2 s
        protocol.data_received(POST)
        await asyncio.sleep(0.1)
        assert not transport.closed
    await asyncio.sleep(0.25)
    assert transport.closed
    assert len(transport.writes) == 4


async def test_a_request_under_way_keeps_its_connection_open() -> None:
    async def slow(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        if scope["path"] == "/slow":
            await asyncio.sleep(0.3)
        await send(start(200, LENGTH_2))
        await send(body(b"ok"))

    protocol, transport = await connected(slow, keep_alive_seconds=0.1)
    protocol.data_received(POST)
    await asyncio.sleep(0.05)
    protocol.data_received(POST.replace(b"POST / ", b"POST /slow "))
    await asyncio.sleep(0.2)  # the first response's timeout has passed: busy, kept
    assert not transport.closed
    await asyncio.sleep(0.15)
    assert len(transport.writes) == 2
    assert not transport.closed
    await asyncio.sleep(0.15)
    assert transport.closed


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
        http=FrontdeskHttpProtocol,
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


async def test_many_connections_at_once_each_get_their_own_answers(served: str) -> None:
    # Answers finished together leave together (the outbox): each must still reach its own
    # connection, in its order, while a streamed answer on another connection waits.
    async def one_connection(client_number: int) -> list[str]:
        async with httpx.AsyncClient(base_url=served) as client:
            return [
                (await client.post("/", content=f"{client_number}.{n}".encode())).text
                for n in range(10)
            ]

    async with httpx.AsyncClient(base_url=served) as slow_client:
        slow = asyncio.ensure_future(slow_client.get("/slow"))
        answers = await asyncio.gather(*(one_connection(number) for number in range(20)))
        assert (await slow).content == b"late"
    for number, texts in enumerate(answers):
        assert texts == [f"got {number}.{n}" for n in range(10)]


async def test_pipelined_requests_are_answered_in_order(served: str) -> None:
    host, port = served.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    requests = [
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n" + str(number).encode()
        for number in range(5)
    ]
    writer.write(b"".join(requests))  # all at once, before any answer
    await writer.drain()
    for number in range(5):
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
        assert head.startswith(b"HTTP/1.1 200")
        assert await reader.readexactly(5) == b"got " + str(number).encode()
    writer.close()


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
    assert protocol is FrontdeskHttpProtocol
