"""The ASGI application served over Granian's own interface, RSGI.

Granian runs HTTP on a tokio thread and the application on Python's. Served as ASGI, every
``receive`` and ``send`` of a request is a call into Granian that hands a message across
(three per request at least: the body, the response's start, its body). Over RSGI the
request's head arrives as one object, the body is read with one call, and the answer is
given with one: the ASGI messages the application exchanges stay in Python, here.
Measured with ``bench/``, the bridge saves more than the 15% of a guest call's server
CPU that code of our own must (docs/decisions/rsgi-bridge.md).

What Granian's RSGI hands over differs from its ASGI scope in two ways, both recorded in
docs/design.md: there is no ``raw_path`` (ASGI makes it optional; routing uses the decoded
``path`` either way), and a header whose value is not visible ASCII never reaches the
application (RFC 9110 section 5.5 makes such octets obsolete; MCP's ``Mcp-Param-*``
headers carry non-ASCII values Base64-encoded).

The lifespan is ASGI's, run from the worker's RSGI start and stop hooks, so the
application is unchanged and any ASGI server can still serve it (the tests do, in process).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from granian.rsgi import HTTPProtocol, ProtocolClosed, ProtocolError
from granian.rsgi import Scope as RsgiScope

from frontdesk.web.asgi import Message, Receive, Scope, Send

App = Callable[[Scope, Receive, Send], Coroutine[Any, Any, None]]
Headers = list[tuple[str, str]]

# A body of a declared length up to this is read in one call (the server holds it no
# longer than the declared length: hyper never reads past it). A longer or chunked one is
# handed to the application piece by piece, so the application's own size limit refuses
# it as soon as it passes, before it is all in memory.
WHOLE_BODY_BYTES = 64 * 1024
_ASGI_VERSION = {"version": "3.0", "spec_version": "2.3"}
_DISCONNECT: Message = {"type": "http.disconnect"}
_FAILED = b"Internal Server Error"
_FAILED_HEADERS = [("content-type", "text/plain; charset=utf-8")]


class LifespanFailed(Exception):
    """The application refused to start (``lifespan.startup.failed``) or failed doing so."""


class RsgiBridge:
    """An ASGI application (``app``) as Granian's RSGI application."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._state: dict[str, Any] = {}
        self._lifespan: _Lifespan | None = None

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # Called by the worker before it serves, with its loop not yet running.
        self._lifespan = _Lifespan(self._app, self._state, loop)
        loop.run_until_complete(self._lifespan.startup())

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        # Called once the worker has stopped serving.
        if self._lifespan is not None:
            loop.run_until_complete(self._lifespan.shutdown())

    async def __rsgi__(self, scope: RsgiScope, protocol: HTTPProtocol) -> None:
        if scope.proto != "http":
            return  # WebSockets are off in the server (http_server.py)
        exchange = _Exchange(protocol, _declared_length(scope))
        try:
            await self._app(self._scope_of(scope), exchange.receive, exchange.send)
        finally:
            # An application that failed, or ended, before answering: the answer an ASGI
            # server gives it. A failure goes on to be logged by the server.
            exchange.answer_if_unanswered()

    def _scope_of(self, scope: RsgiScope) -> Scope:
        return {
            "type": "http",
            "asgi": _ASGI_VERSION,
            "http_version": scope.http_version,
            "method": scope.method,
            "scheme": scope.scheme,
            "path": scope.path,
            "query_string": scope.query_string.encode("ascii"),
            "root_path": "",
            "headers": [
                (name.encode("ascii"), value.encode("ascii"))
                for name, value in scope.headers.items()
            ],
            "client": _address(scope.client),
            "server": _address(scope.server),
            # Each request its own copy, as ASGI servers give it (ASGI lifespan "state").
            "state": self._state.copy(),
        }


class _Exchange:
    """One request's ``receive`` and ``send`` over its RSGI protocol object."""

    __slots__ = ("_chunks", "_headers", "_protocol", "_reading", "_status", "_stream", "answered")

    def __init__(self, protocol: HTTPProtocol, declared_length: int | None) -> None:
        self._protocol = protocol
        # How the body is read: None once it has been, else whole, empty or in pieces.
        self._reading: str | None = (
            "pieces"
            if declared_length is None or declared_length > WHOLE_BODY_BYTES
            else "whole"
            if declared_length
            else "empty"
        )
        self._chunks: Any = None  # the body's async iterator, once reading in pieces
        self._status = 0
        self._headers: Headers = []
        self._stream: Any = None  # the response's stream, once answering in pieces
        self.answered = False

    async def receive(self) -> Message:
        reading = self._reading
        if reading is None:
            # The body has been read: what follows is the client going away.
            with contextlib.suppress(ProtocolClosed, ProtocolError):
                await self._protocol.client_disconnect()
            return _DISCONNECT
        if reading == "empty":
            self._reading = None
            return {"type": "http.request", "body": b"", "more_body": False}
        try:
            if reading == "whole":
                body = await self._protocol()
                self._reading = None
                return {"type": "http.request", "body": body, "more_body": False}
            if self._chunks is None:
                self._chunks = aiter(self._protocol)
            try:
                chunk: bytes = await anext(self._chunks)
            except StopAsyncIteration:
                self._reading = None
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.request", "body": chunk, "more_body": True}
        except (ProtocolClosed, ProtocolError):
            # The client went away, or broke its body off.
            self._reading = None
            return _DISCONNECT

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self._status:
                raise RuntimeError("the response has started already")
            self._status = message["status"]
            self._headers = [
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, value in message.get("headers", ())
            ]
            return
        if kind != "http.response.body":
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        if not self._status or self.answered:
            raise RuntimeError("no response is open for a body")
        body: bytes = message.get("body", b"")
        more = message.get("more_body", False)
        if self._stream is None and not more:
            # The whole answer in one message: what every Frontdesk route sends.
            self.answered = True
            self._protocol.response_bytes(self._status, self._headers, body)
            return
        if self._stream is None:
            self._stream = self._protocol.response_stream(self._status, self._headers)
        if body:
            await self._stream.send_bytes(body)
        if not more:
            self.answered = True

    def answer_if_unanswered(self) -> None:
        if self.answered or self._stream is not None:
            return  # a stream broken off ends with its connection
        self.answered = True
        with contextlib.suppress(ProtocolClosed, ProtocolError):  # the client is gone
            self._protocol.response_bytes(500, _FAILED_HEADERS, _FAILED)


class _Lifespan:
    """The ASGI lifespan protocol, driven from the worker's start and stop hooks."""

    def __init__(self, app: App, state: dict[str, Any], loop: asyncio.AbstractEventLoop) -> None:
        self._app = app
        self._state = state
        self._loop = loop
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._replies: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def startup(self) -> None:
        scope: Scope = {"type": "lifespan", "asgi": _ASGI_VERSION, "state": self._state}
        self._task = self._loop.create_task(self._app(scope, self._inbox.get, self._replies.put))
        reply = await self._exchange("lifespan.startup")
        if reply["type"] != "lifespan.startup.complete":
            raise LifespanFailed(reply.get("message") or "the application did not start")

    async def shutdown(self) -> None:
        if self._task is None or self._task.done():
            return
        reply = await self._exchange("lifespan.shutdown")
        await self._task
        if reply["type"] != "lifespan.shutdown.complete":
            raise LifespanFailed(reply.get("message") or "the application did not stop cleanly")

    async def _exchange(self, event: str) -> Message:
        """Send ``event`` and wait for the application's reply, or for it to end."""
        assert self._task is not None
        self._inbox.put_nowait({"type": event})
        reply = asyncio.ensure_future(self._replies.get())
        await asyncio.wait((reply, self._task), return_when=asyncio.FIRST_COMPLETED)
        if reply.done():
            return reply.result()
        reply.cancel()
        error = self._task.exception()
        raise LifespanFailed(f"the application ended at {event}") from error


def _declared_length(scope: RsgiScope) -> int | None:
    """The body's declared length, when it is declared plainly (RFC 9112 section 6.3)."""
    headers = scope.headers
    if "transfer-encoding" in headers:
        return None
    length = headers.get("content-length")
    if length is None:
        return 0
    return int(length) if length.isdigit() else None


def _address(address: str) -> tuple[str, int] | None:
    """``"host:port"`` (``"[v6]:port"`` for IPv6), as RSGI gives it, as ASGI's pair."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)
