"""A deadline on each request's body, and a cap on the bodies each client address has on
their way: the limits on slow clients the HTTP server lacks.

The server (http_server.py) bounds the wait for a request's head, but once the head is in
it hands the request over and waits for the body as long as the client takes: a client
that announces a body and sends it a byte at a time, or never, would hold its connection
and the request's task for ever. This layer, around the application, gives the whole body
one deadline, counted from the moment the request is handed over. When it passes, the
client is answered ``408 Request Timeout`` with ``Connection: close``, which ends the
connection (RFC 9110 section 15.5.9), and the application is told ``http.disconnect``, as
if the client had gone away: it stops reading, and answers no one.

Only a request that announces a body (``Content-Length`` above zero, or
``Transfer-Encoding``: RFC 9112 section 6.3) is timed; any other has nothing to wait for.
No timer is set per request: one task per event loop looks at the reads under way every
``SWEEP_SECONDS`` and cancels those past their deadline, as ``asyncio.timeout`` would (a
body is cut off at most that much after its deadline; docs/design.md, "Hot path").

The same layer caps the bodies each client address has under way at once
(bodies_per_address.py): a body past the cap is not read, the client is answered
``429 Too Many Requests`` with ``Retry-After`` and ``Connection: close`` (RFC 6585
section 4), which frees its connection at once, and the application is told
``http.disconnect``, as on a timeout.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.requests import ClientDisconnect

from frontdesk.web.asgi import JSON_CONTENT, Message, Receive, Scope, Send, headers_of
from frontdesk.web.bodies_per_address import BodiesPerAddress, address_key
from frontdesk.web.network import ClientAddressResolver

App = Callable[[Scope, Receive, Send], Awaitable[None]]

# Set in the scope of a request this layer answered (408 for a body that timed out, 429
# for one past its address's cap), to that status: the edge logs and counts it, whatever
# the application made of the disconnection it was told of. 499 (nginx's "client closed
# request") when the client went away before its body was in, and no one was answered.
BODY_ANSWERED = "frontdesk.body_answered"
CLIENT_LEFT = 499

# How often the reads under way are looked at, and how many looks with none under way the
# looking task waits before it ends (a busy worker keeps one task, an idle one none).
SWEEP_SECONDS = 0.25
IDLE_SWEEPS = 40

_TIMED_OUT = orjson.dumps(
    {"error": "request_timeout", "error_description": "The request body was not received in time"}
)
_TIMEOUT_HEADERS = [
    JSON_CONTENT,
    (b"content-length", str(len(_TIMED_OUT)).encode()),
    (b"connection", b"close"),
]
_CROWDED = orjson.dumps(
    {
        "error": "rate_limited",
        "error_description": "Too many requests from this address are sending their body",
    }
)
# A body's cap frees as soon as another body of the address is in: a second is plenty.
_CROWDED_HEADERS = [
    JSON_CONTENT,
    (b"content-length", str(len(_CROWDED)).encode()),
    (b"retry-after", b"1"),
    (b"connection", b"close"),
]


class BodyDeadline:
    """The application, with each request's body due within ``seconds``, and at most
    ``bodies.limit`` bodies under way per client address (as ``resolver`` finds it, after
    the trusted proxies) when ``bodies`` is given."""

    def __init__(
        self,
        app: App,
        seconds: float,
        bodies: BodiesPerAddress | None = None,
        resolver: ClientAddressResolver | None = None,
    ) -> None:
        self._app = app
        self._seconds = seconds
        self._bodies = bodies
        self._resolver = resolver or ClientAddressResolver(())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _announces_body(scope):
            await self._app(scope, receive, send)
            return
        body = TimedBody(scope, receive, send, self._seconds)
        if self._bodies is not None:
            body.count_in(self._bodies, address_key(self._resolver.resolve(scope)))
        try:
            await self._app(scope, body.receive, body.send)
        except ClientDisconnect:
            # Starlette's word for a client gone before its body was in: no failure of
            # the service's, and one traceback in the log per abandoned body would let any
            # client fill the log at will.
            if not (body.answered or body.client_left):
                raise
        except Exception:
            # Once the client has this layer's answer, whatever the application makes of
            # the disconnection it was told of (a framework answering it with a 500 that
            # can no longer be sent) concerns no one.
            if not body.answered:
                raise
        finally:
            body.stop_counting()


class _Sweeper:
    """The reads waiting for a body on one event loop, and the one task that cancels those
    past their deadline."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.reading: dict[asyncio.Task[Any], TimedBody] = {}
        self._task: asyncio.Task[None] | None = None

    def watch(self, task: asyncio.Task[Any], body: TimedBody) -> None:
        self.reading[task] = body
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self._sweep())

    async def _sweep(self) -> None:
        idle = 0
        while idle < IDLE_SWEEPS:
            await asyncio.sleep(SWEEP_SECONDS)
            idle = 0 if self.reading else idle + 1
            now = self._loop.time()
            for task, body in list(self.reading.items()):
                if now >= body.deadline and not body.expired:
                    body.expired = True
                    task.cancel()


_sweepers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweeper] = (
    weakref.WeakKeyDictionary()
)


def _sweeper() -> _Sweeper:
    loop = asyncio.get_running_loop()
    sweeper = _sweepers.get(loop)
    if sweeper is None:
        sweeper = _sweepers[loop] = _Sweeper(loop)
    return sweeper


class TimedBody:
    """The ``receive`` of one request, every wait for its body bounded by one deadline and
    the body held to its address's cap once counted in, and its ``send``, which closes the
    connection after an answer given before the whole body was read."""

    __slots__ = (
        "_bodies",
        "_counted",
        "_key",
        "_receive",
        "_scope",
        "_send",
        "answered",
        "body_done",
        "client_left",
        "deadline",
        "expired",
    )

    def __init__(self, scope: Scope, receive: Receive, send: Send, seconds: float) -> None:
        self._scope = scope
        self._receive = receive
        self._send = send
        # On the event loop's clock, the one the sweeper reads.
        self.deadline = asyncio.get_running_loop().time() + seconds
        # The sweeper found the deadline past and cancelled the read.
        self.expired = False
        self._bodies: BodiesPerAddress | None = None
        self._key = ""
        self._counted = False
        self.body_done = False
        # This layer answered (408 or 429) and told the application the client went away.
        self.answered = False
        # The client went away before the whole body was in.
        self.client_left = False

    def count_in(self, bodies: BodiesPerAddress, key: str) -> None:
        """Hold the body to ``bodies``' cap for ``key``, its client, from its first read."""
        self._bodies = bodies
        self._key = key

    def stop_counting(self) -> None:
        if self._counted and self._bodies is not None:
            self._counted = False
            self._bodies.give_back(self._key)

    async def receive(self) -> Message:
        if self.answered:
            return {"type": "http.disconnect"}
        if self.body_done:
            # Past the body, a receive waits for the client to go away: as long as it takes.
            return await self._receive()
        if not self._counted and self._bodies is not None:
            if not self._bodies.take(self._key):
                await self._answer(429, _CROWDED_HEADERS, _CROWDED)
                return {"type": "http.disconnect"}
            self._counted = True
        task = asyncio.current_task()
        if task is None or asyncio.get_running_loop().time() >= self.deadline:
            await self._answer(408, _TIMEOUT_HEADERS, _TIMED_OUT)
            return {"type": "http.disconnect"}
        sweeper = _sweeper()
        sweeper.watch(task, self)
        try:
            message = await self._receive()
        except asyncio.CancelledError:
            # The sweeper's cancellation is taken back; anyone else's goes on.
            if not self.expired or task.uncancel() > 0:
                raise
            await self._answer(408, _TIMEOUT_HEADERS, _TIMED_OUT)
            return {"type": "http.disconnect"}
        finally:
            sweeper.reading.pop(task, None)
        if message["type"] != "http.request" or not message.get("more_body", False):
            self.body_done = True
            self.stop_counting()
            if message["type"] == "http.disconnect":
                self.client_left = True
                self._scope[BODY_ANSWERED] = CLIENT_LEFT
        return message

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and not self.body_done:
            # Answered before the body was read whole (a refusal that needed no body: an
            # unknown company, a rate limit, an outage). The rest of the body may still be
            # on its way, and the server then closes the connection after the answer, under
            # a client that would reuse it for its next request: it is told so instead
            # (RFC 9112 section 9.6), and opens a new one.
            message["headers"] = [*message.get("headers", ()), (b"connection", b"close")]
        await self._send(message)

    async def _answer(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.answered = True
        self.stop_counting()
        self._scope[BODY_ANSWERED] = status
        try:
            await self._send({"type": "http.response.start", "status": status, "headers": headers})
            await self._send({"type": "http.response.body", "body": body})
        except Exception:  # noqa: S110
            # The application had started its response already, or the client went away:
            # there is no one left to tell.
            pass


def _announces_body(scope: Scope) -> bool:
    headers = headers_of(scope)
    length = headers.get(b"content-length")
    return (length is not None and length != b"0") or b"transfer-encoding" in headers
