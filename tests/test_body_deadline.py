"""The body deadline's layer (frontdesk.web.body_deadline) around an application: an answer
given before the body was read whole closes the connection, one given after keeps it."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import orjson
import pytest
from starlette.requests import ClientDisconnect
from starlette.requests import Request as StarletteRequest

from frontdesk.web.asgi import Message, Receive, Scope, Send
from frontdesk.web.bodies_per_address import BodiesPerAddress, address_key
from frontdesk.web.body_deadline import BODY_ANSWERED, BodyDeadline
from frontdesk.web.network import ClientAddressResolver

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def scope() -> Scope:
    return {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-length", str(len(BODY)).encode())],
    }


async def answer_with(app: Any) -> list[Message]:
    sent: list[Message] = []
    parts = [{"type": "http.request", "body": BODY, "more_body": False}]

    async def receive() -> Message:
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await BodyDeadline(app, 5.0)(scope(), receive, send)
    return sent


async def respond(send: Send) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def test_an_answer_before_the_body_was_read_closes_the_connection() -> None:
    """The rest of the body may still be on its way: the client is told not to reuse it."""

    async def refuses_at_once(_scope: Scope, _receive: Receive, send: Send) -> None:
        await respond(send)

    [start, _body] = await answer_with(refuses_at_once)
    assert (b"connection", b"close") in start["headers"]


async def test_an_answer_after_the_body_keeps_the_connection() -> None:
    async def reads_then_answers(_scope: Scope, receive: Receive, send: Send) -> None:
        assert (await receive())["body"] == BODY
        await respond(send)

    [start, _body] = await answer_with(reads_then_answers)
    assert (b"connection", b"close") not in start["headers"]


# The cap on bodies under way per client address (frontdesk.web.bodies_per_address).

PEER = "198.51.100.7"
OTHER = "198.51.100.8"
PROXY = "10.0.0.1"
TOLD = "test.told"


async def echo(request: Scope, receive: Receive, send: Send) -> None:
    """Reads the body, notes what it was told, and answers with the body it read."""
    message = await receive()
    request[TOLD] = message["type"]
    if message["type"] == "http.request":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": message["body"]})


def capped(limit: int, trusted_proxies: tuple[str, ...] = ()) -> BodyDeadline:
    return BodyDeadline(echo, 5.0, BodiesPerAddress(limit), ClientAddressResolver(trusted_proxies))


class Request:
    """One request through ``layer`` from ``address``: its body arrives when ``arrive``
    is set."""

    def __init__(self, layer: BodyDeadline, address: str, *forwarded: str) -> None:
        headers = [(b"content-length", str(len(BODY)).encode())]
        headers += [(b"x-forwarded-for", hop.encode()) for hop in forwarded]
        self.scope: Scope = {**scope(), "client": (address, 40000), "headers": headers}
        self.arrive = asyncio.Event()
        self.reading = asyncio.Event()
        self.sent: list[Message] = []
        self._layer = layer

    async def run(self) -> None:
        async def receive() -> Message:
            self.reading.set()
            await self.arrive.wait()
            return {"type": "http.request", "body": BODY, "more_body": False}

        async def send(message: Message) -> None:
            self.sent.append(message)

        await self._layer(self.scope, receive, send)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"]) if self.sent else 0

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        return list(self.sent[0]["headers"])


async def test_a_body_past_its_address_cap_is_refused_unread_and_the_connection_closed() -> None:
    """Two bodies of one address under way: its third is answered 429 at once, with
    Retry-After and Connection: close (RFC 6585 section 4), and the application is told the
    client went away; another address's body is read."""
    layer = capped(2)
    held = [Request(layer, PEER) for _ in range(2)]
    async with anyio.create_task_group() as tasks:
        for request in held:
            tasks.start_soon(request.run)
            await request.reading.wait()
        third = Request(layer, PEER)
        await third.run()
        other = Request(layer, OTHER)
        other.arrive.set()
        await other.run()
        for request in held:
            request.arrive.set()

    assert third.status == 429
    assert (b"connection", b"close") in third.headers
    assert (b"retry-after", b"1") in third.headers
    assert orjson.loads(third.sent[1]["body"])["error"] == "rate_limited"
    assert third.scope[TOLD] == "http.disconnect"
    # The edge logs and counts what the client was told.
    assert third.scope[BODY_ANSWERED] == 429
    assert other.status == 200
    assert [request.status for request in held] == [200, 200]


async def test_a_body_read_whole_frees_its_place() -> None:
    layer = capped(1)
    first = Request(layer, PEER)
    first.arrive.set()
    await first.run()
    second = Request(layer, PEER)
    second.arrive.set()
    await second.run()
    assert (first.status, second.status) == (200, 200)


async def test_a_request_is_not_counted_before_its_body_is_read() -> None:
    """A request waiting on the service (a lookup before its body is read) is no doing of
    the client's: it holds no place."""
    layer = BodyDeadline(read_when_told, 5.0, BodiesPerAddress(1), ClientAddressResolver(()))
    waiting = Request(layer, PEER)
    waiting.scope["test.go"] = asyncio.Event()
    reading = Request(layer, PEER)
    reading.scope["test.go"] = asyncio.Event()
    reading.scope["test.go"].set()
    reading.arrive.set()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(waiting.run)
        await reading.run()
        waiting.arrive.set()
        waiting.scope["test.go"].set()
    assert (reading.status, waiting.status) == (200, 200)


async def read_when_told(request: Scope, receive: Receive, send: Send) -> None:
    await request["test.go"].wait()
    await echo(request, receive, send)


async def test_the_cap_counts_the_client_behind_a_trusted_proxy() -> None:
    """Every request comes from the proxy; each client behind it has a cap of its own,
    and a client's own X-Forwarded-For cannot move it out of its count."""
    layer = capped(1, trusted_proxies=(PROXY,))
    held = Request(layer, PROXY, PEER)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(held.run)
        await held.reading.wait()
        same = Request(layer, PROXY, f"203.0.113.9, {PEER}")
        await same.run()
        other = Request(layer, PROXY, OTHER)
        other.arrive.set()
        await other.run()
        held.arrive.set()
    assert (held.status, same.status, other.status) == (200, 429, 200)


def test_an_ipv6_client_is_counted_by_its_64() -> None:
    """A subscriber picks addresses from its /64 at will (RFC 6177 section 3)."""
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:198.51.100.7") == PEER
    assert address_key(PEER) == PEER


async def test_a_client_gone_before_its_body_is_in_is_no_failure() -> None:
    """Starlette raises ClientDisconnect when the body stops with the client's going away:
    that is recorded as 499 (no one answered), not raised for the server to log a
    traceback and a 500 per abandoned body."""
    parts: list[Message] = [
        {"type": "http.request", "body": BODY[:5], "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> Message:
        return parts.pop(0)

    async def send(message: Message) -> None:
        raise AssertionError(f"nothing is sent to a client that has gone: {message}")

    async def reads_a_form(request: Scope, receive: Receive, send: Send) -> None:
        await StarletteRequest(request, receive).body()

    request = scope()
    await BodyDeadline(reads_a_form, 5.0)(request, receive, send)
    assert request[BODY_ANSWERED] == 499


async def test_a_client_disconnect_raised_without_one_is_still_a_failure() -> None:
    async def raises(_scope: Scope, receive: Receive, _send: Send) -> None:
        await receive()
        raise ClientDisconnect

    with pytest.raises(ClientDisconnect):
        await answer_with(raises)


async def test_a_body_past_its_deadline_is_answered_408_and_the_app_told_it_is_gone() -> None:
    """No timer of its own: the loop's one sweeping task cancels the read once the deadline
    has passed (body_deadline.SWEEP_SECONDS), the client gets 408 and the application a
    disconnection; a read that ends in time is untouched on the same loop."""
    sent: list[Message] = []
    told: list[Message] = []
    never = asyncio.Event()

    async def stalls() -> Message:
        await never.wait()
        raise AssertionError("the body never comes")

    async def send(message: Message) -> None:
        sent.append(message)

    async def reads(_scope: Scope, receive: Receive, _send: Send) -> None:
        told.append(await receive())

    request = scope()
    started = asyncio.get_running_loop().time()
    await BodyDeadline(reads, 0.3)(request, stalls, send)
    waited = asyncio.get_running_loop().time() - started
    assert told == [{"type": "http.disconnect"}]
    assert sent[0]["status"] == 408
    assert request[BODY_ANSWERED] == 408
    assert 0.3 <= waited < 2.0
    # Reads in time on the same loop, with the sweeper running, are left alone.
    start, _body = await answer_with(echo_status)
    assert start["status"] == 200


async def echo_status(_scope: Scope, receive: Receive, send: Send) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})
