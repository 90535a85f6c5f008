"""The HTTP/1.1 protocol ``frontdesk serve`` runs: uvicorn's httptools protocol, with a
request-response cycle of our own in place of uvicorn's.

uvicorn's protocol keeps what it does well and what we would only get wrong by redoing
it: parsing (httptools), keep-alive and its timeout, pipelining, flow control, upgrades,
graceful shutdown. Its cycle, the object that carries one request's ASGI ``receive`` and
``send``, is replaced by ``Exchange``, which does the same job for less on every request:

- a whole response, head and body, leaves in one write, where uvicorn writes the head
  as soon as the app starts its response: two system calls and two TCP segments for
  every small response;
- answers finished while other requests are being answered wait for them in the
  ``Outbox``, and leave together when the last is done or early in the event loop's next
  turn, whichever comes first; a lone answer leaves at once. A peer on the same machine
  (a reverse proxy, the load generator) is then woken once for a run of answers, not
  once per answer, and waking it cost the server's CPU a third of a guest call. Measured
  with wrk on loopback, 32 connections: 70 µs of server CPU per guest call and 15,800
  calls/s with a write per answer, 45 µs and 21,500 calls/s with the outbox; with one
  connection, no change (6,600 calls/s, p50 0.14 ms either way). An answer waits at
  most for the requests that were ready in the same turn. A response that streams goes
  out as before: its head on the next turn, then every chunk as it is sent;
- the response's headers are checked all together, by two C calls per response, not by
  two regular-expression searches per header;
- a body that has arrived whole is handed over without an ``asyncio.Event``, and
  without copying it out of a bytearray.

The protocol also keeps one keep-alive timer per connection, where uvicorn arms one
after every response and cancels it on the next request (1.8 µs per request in uvloop),
and a finished request leaves the server's task set itself rather than by a
done-callback, a turn of the event loop sooner.

Everything else the ASGI app sees is uvicorn's: the same scope, the same messages, the
same errors. A guest ``tools/call`` took 41 µs in-process with uvicorn's cycle (writes
joined) and 37 µs with this one; on the loaded server, 78 µs of CPU and 53-63 µs (quick
bench runs, docs/design.md). Selected with uvicorn's ``http=`` option (operations.serve).
"""

from __future__ import annotations

import asyncio
import contextvars
import urllib.parse
import weakref
from collections.abc import Iterable
from typing import Any

import httptools
from uvicorn._types import ASGI3Application
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

# What HTTP allows in a header's name (a token) and value (no control character but tab).
# All names are checked at once, then all values, by deleting the allowed bytes: whatever
# is left is not allowed. Two C calls per response, not two regular-expression searches
# per header, and a name or value that could split the response never reaches the wire.
_TOKEN = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_FIELD_VALUE = bytes([0x09, *range(0x20, 0x7F), *range(0x80, 0x100)])
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_CLOSE = b"connection: close\r\n"
_CHUNKED = b"transfer-encoding: chunked\r\n"
_LAST_CHUNK = b"0\r\n\r\n"
_DISCONNECT = {"type": "http.disconnect"}


class FrontdeskHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, running each request in an ``Exchange``, with one
    keep-alive timer per connection where uvicorn arms and cancels one per request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outbox = Outbox.of(self.loop)
        # When the connection last went idle (its last response complete, nothing new
        # received since); None while a request is under way.
        self._idle_since: float | None = None
        self._idle_check: asyncio.TimerHandle | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._idle_check is not None:
            self._idle_check.cancel()
            self._idle_check = None

    def data_received(self, data: bytes) -> None:
        # The new data can make uvicorn write at once (a 400 for a malformed request, a 100
        # Continue for the next one), and that must follow the answer before it.
        self._write_waiting_answer()
        super().data_received(data)

    def shutdown(self) -> None:
        # uvicorn closes an idle connection at once on shutdown.
        self._write_waiting_answer()
        super().shutdown()

    def _write_waiting_answer(self) -> None:
        """Send what this connection's last exchange still has waiting in the outbox, ahead
        of anything uvicorn writes on its own."""
        exchange: Exchange | None = self.cycle  # type: ignore[assignment]
        if exchange is not None:
            exchange.write_unsent()

    def _unset_keepalive_if_required(self) -> None:
        # uvicorn calls this on every data_received: the connection is busy again. The
        # timer stays armed; when it fires it finds the connection busy and lets it be.
        self._idle_since = None

    def _start_asgi_task(self, exchange: Exchange, app: ASGI3Application) -> None:  # type: ignore[override]
        # As uvicorn starts a request, less the done-callback it adds to drop the task from
        # ``tasks``: that is one more turn of the loop per request. ``run_asgi`` drops it.
        context = contextvars.Context() if self.config.reset_contextvars else None
        task = self.loop.create_task(exchange.run_asgi(app), context=context)
        exchange.task = task
        self.tasks.add(task)
        self.outbox.under_way += 1

    def on_response_complete(self) -> None:
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.pipeline:
            exchange, app = self.pipeline.pop()
            self._start_asgi_task(exchange, app)  # type: ignore[arg-type]
            return
        self._idle_since = self.loop.time()
        if self._idle_check is None:
            self._idle_check = self.loop.call_later(self.timeout_keep_alive, self._close_if_idle)

    def _close_if_idle(self) -> None:
        """Close the connection once it has been idle for the keep-alive timeout, as uvicorn
        does; a connection busy now is checked again after its next response."""
        self._idle_check = None
        idle_since = self._idle_since
        if idle_since is None or self.transport.is_closing():
            return
        left = idle_since + self.timeout_keep_alive - self.loop.time()
        if left > 0:
            self._idle_check = self.loop.call_later(left, self._close_if_idle)
        else:
            self.transport.close()

    def on_headers_complete(self) -> None:
        parser = self.parser
        scope: dict[str, Any] = self.scope  # type: ignore[assignment]
        scope["method"] = parser.get_method().decode("ascii")
        http_version = parser.get_http_version()
        if http_version != "1.1":
            scope["http_version"] = http_version
        if parser.should_upgrade() and self._should_upgrade():
            return  # data_received hands the connection to the WebSocket protocol
        url = httptools.parse_url(self.url)
        raw_path: bytes = url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        scope["path"] = self.root_path + path
        scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        scope["query_string"] = url.query or b""

        app: ASGI3Application = self.app
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            self.logger.warning("Exceeded concurrency limit.")
            app = service_unavailable

        previous: Exchange | None = self.cycle  # type: ignore[assignment]
        exchange = Exchange(self, scope, http_version != "1.0" and parser.should_keep_alive())
        self.cycle = exchange  # type: ignore[assignment]
        if previous is None or previous.response_complete:
            self._start_asgi_task(exchange, app)
        else:
            # A pipelined request waits for the one before it to be answered:
            # on_response_complete starts it then.
            self.flow.pause_reading()
            self.pipeline.appendleft((exchange, app))  # type: ignore[arg-type]


class Outbox:
    """What the exchanges of every connection have written and not yet sent: whole
    responses, and the heads of responses whose body is not there yet.

    The answer that leaves no request under way sends everything waiting, at once: a lone
    request's answer leaves the moment it is finished, and when a turn of the event loop
    began with many requests ready, their answers leave together once the last is done.
    Requests waiting on something else (a database, a backend) keep that from happening
    within the turn, so what waits at its end is sent early in the next, by one callback
    for every connection: uvloop runs the callbacks that were ready when a turn began,
    then polls the sockets without waiting and starts the next turn with this one. A
    connection's data also goes out sooner when it must
    (``FrontdeskHttpProtocol.data_received``, a streamed chunk, a connection about to close).

    The count of requests under way only decides how soon the waiting data leaves, never
    whether it does.
    """

    # Holds no reference to its loop: the loop is its key in _OUTBOXES, which is weak, and
    # a value pointing back at its key would keep both alive.
    __slots__ = ("_exchanges", "_scheduled", "under_way")

    def __init__(self) -> None:
        self._exchanges: list[Exchange] = []
        self._scheduled = False
        # Requests whose task has started and whose response is not complete, on every
        # connection of this event loop.
        self.under_way = 0

    @staticmethod
    def of(loop: asyncio.AbstractEventLoop) -> Outbox:
        outbox = _OUTBOXES.get(loop)
        if outbox is None:
            outbox = _OUTBOXES[loop] = Outbox()
        return outbox

    def add(self, exchange: Exchange, loop: asyncio.AbstractEventLoop) -> None:
        self._exchanges.append(exchange)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._send_at_turn)

    def answered(self) -> None:
        """One request fewer under way (its response complete, or its task over)."""
        self.under_way -= 1
        if self.under_way <= 0:
            self.under_way = 0
            self._send_all()

    def _send_at_turn(self) -> None:
        self._scheduled = False
        self._send_all()

    def _send_all(self) -> None:
        exchanges, self._exchanges = self._exchanges, []
        for exchange in exchanges:
            exchange.write_unsent()


# One per event loop (a test process runs many loops, one after another).
_OUTBOXES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox] = (
    weakref.WeakKeyDictionary()
)


class _Arrival:
    """Set when more of the body arrived, or the connection was lost: the ``message_event``
    uvicorn's protocol signals. An ``asyncio.Event`` would do, at the cost of a deque and a
    coroutine on every request, where the body has nearly always arrived whole already."""

    __slots__ = ("_loop", "_waiter", "is_set")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiter: asyncio.Future[None] | None = None
        self.is_set = False

    def set(self) -> None:
        self.is_set = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        waiter = self._waiter = self._loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None


class Exchange:
    """One request and its response: the ASGI ``receive`` and ``send`` of one request, in
    the part uvicorn calls a cycle. The protocol reads and sets the attributes it knows
    from uvicorn's cycle (``body``, ``more_body``, ``message_event``, ``disconnected``,
    ``keep_alive``, ``response_complete``)."""

    __slots__ = (
        "_protocol",
        "_unsent",
        "body",
        "chunked",
        "disconnected",
        "keep_alive",
        "left_to_send",
        "message_event",
        "more_body",
        "on_response",
        "response_complete",
        "response_started",
        "scope",
        "task",
        "transport",
        "waiting_for_100_continue",
    )

    def __init__(self, protocol: FrontdeskHttpProtocol, scope: Any, keep_alive: bool) -> None:
        self._protocol = protocol
        self.scope = scope
        self.transport = protocol.transport
        self.message_event = _Arrival(protocol.loop)
        self.on_response = protocol.on_response_complete
        self.keep_alive = keep_alive
        self.waiting_for_100_continue = protocol.expect_100_continue
        self.disconnected = False
        # bytes, not a bytearray: the protocol's ``body += chunk`` makes the first chunk
        # the body itself, with no copy, and the usual request has just the one.
        self.body = b""
        self.more_body = True
        self.response_started = False
        self.response_complete = False
        self.chunked = False
        self.left_to_send = 0
        # What the response has written that waits in the outbox: its head, and its body
        # once the app has sent all of it.
        self._unsent: bytes | None = None
        self.task: asyncio.Task[None] | None = None

    async def run_asgi(self, app: ASGI3Application) -> None:
        logger = self._protocol.logger
        try:
            result = await app(self.scope, self.receive, self.send)  # type: ignore[arg-type, func-returns-value]
        except BaseException as error:
            logger.error("Exception in ASGI application\n", exc_info=error)
            if not self.response_started:
                await self._send_500()
            else:
                self._abandon()
        else:
            if result is not None:
                logger.error("ASGI callable should return None, but returned '%s'.", result)
                self._abandon()
            elif not self.response_started and not self.disconnected:
                logger.error("ASGI callable returned without starting response.")
                await self._send_500()
            elif not self.response_complete and not self.disconnected:
                logger.error("ASGI callable returned without completing response.")
                self._abandon()
        finally:
            if not self.response_complete:
                self._protocol.outbox.answered()
            self.on_response = _nothing
            # What uvicorn's done-callback would do a turn later: the request is over.
            self._protocol.tasks.discard(self.task)

    async def receive(self) -> dict[str, Any]:
        if self.waiting_for_100_continue and not self.transport.is_closing():
            self.transport.write(_CONTINUE)
            self.waiting_for_100_continue = False
        if not self.disconnected and not self.response_complete:
            self._protocol.flow.resume_reading()
            arrival = self.message_event
            if not arrival.is_set:
                await arrival.wait()
            arrival.is_set = False
        if self.disconnected or self.response_complete:
            return _DISCONNECT.copy()
        body, self.body = self.body, b""
        return {"type": "http.request", "body": body, "more_body": self.more_body}

    async def send(self, message: Any) -> None:
        flow = self._protocol.flow
        if flow.write_paused and not self.disconnected:
            await flow.drain()
        if self.disconnected:
            return
        kind = message["type"]
        if not self.response_started:
            if kind != "http.response.start":
                raise RuntimeError(
                    f"Expected ASGI message 'http.response.start', but got '{kind}'."
                )
            self._start(message["status"], message.get("headers", ()))
        elif self.response_complete:
            raise RuntimeError(
                f"Unexpected ASGI message '{kind}' sent, after response already completed."
            )
        elif kind != "http.response.body":
            raise RuntimeError(f"Expected ASGI message 'http.response.body', but got '{kind}'.")
        else:
            self._write_body(message.get("body", b""), message.get("more_body", False))

    def _start(self, status: int, app_headers: Iterable[tuple[bytes, bytes]]) -> None:
        protocol = self._protocol
        # name, ": ", value, CRLF for each header: names at [0::4], values at [2::4].
        lines: list[bytes] = []
        length: int | None = None
        chunked = False
        says_close = False
        for headers in (protocol.server_state.default_headers, app_headers):
            for name, value in headers:
                name = name.lower()
                if name == b"content-length" and not chunked and length is None:
                    length = int(value)
                elif name == b"transfer-encoding" and value.lower() == b"chunked":
                    chunked = True
                elif name == b"connection" and b"close" in _tokens(value):
                    self.keep_alive = False
                    says_close = True
                lines += (name, b": ", value, b"\r\n")
        names, values = b"".join(lines[0::4]), b"".join(lines[2::4])
        if names.translate(None, _TOKEN) or values.translate(None, _FIELD_VALUE):
            # Raised before anything is written, so the client gets a 500, not half a head.
            raise RuntimeError("Invalid HTTP header name or value.")
        block = b"".join(lines)
        if not self.keep_alive and not says_close:
            block += _CLOSE
        if (
            length is None
            and not chunked
            and self.scope["method"] != "HEAD"
            and status not in (204, 304)
        ):
            # Neither length nor encoding given: the body is sent in chunks.
            chunked = True
            block += _CHUNKED
        self.chunked = chunked
        self.left_to_send = 0 if chunked or length is None else length
        self.response_started = True
        self.waiting_for_100_continue = False
        if protocol.access_log:
            protocol.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                get_client_addr(self.scope),
                self.scope["method"],
                get_path_with_query_string(self.scope),
                self.scope["http_version"],
                status,
            )
        self._unsent = STATUS_LINE[status] + block + b"\r\n"
        # Normally the whole body follows in this same turn of the loop and joins the head
        # in the outbox; a response that streams gets its head out on the next turn.
        protocol.outbox.add(self, protocol.loop)

    def _write_body(self, body: bytes, more_body: bool) -> None:
        if self.scope["method"] == "HEAD":
            data = b""
            self.left_to_send = 0
        elif self.chunked:
            data = b"%x\r\n%b\r\n" % (len(body), body) if body else b""
            if not more_body:
                data += _LAST_CHUNK
        else:
            if len(body) > self.left_to_send:
                raise RuntimeError("Response content longer than Content-Length")
            self.left_to_send -= len(body)
            data = body
        unsent = self._unsent
        if unsent is not None:
            if not more_body and self.keep_alive:
                # The whole response: it leaves with the others answered in this turn.
                self._unsent = unsent + data
                data = b""
            else:
                # A chunk of a stream goes out as it is sent, and a response that ends its
                # connection before the close.
                self._unsent = None
                data = unsent + data
        if data:
            self.transport.write(data)
        if not more_body:
            if self.left_to_send != 0:
                raise RuntimeError("Response content shorter than Content-Length")
            self.response_complete = True
            self._protocol.outbox.answered()
            self.message_event.set()
            if not self.keep_alive:
                self.transport.close()
            self.on_response()

    def write_unsent(self) -> None:
        unsent = self._unsent
        if unsent is not None:
            self._unsent = None
            # A connection lost before this turn came takes its unsent answer with it.
            if not self.transport.is_closing():
                self.transport.write(unsent)

    def _abandon(self) -> None:
        """End a response that cannot be completed: what was started goes out, then the
        connection closes, so the client sees a cut response rather than a wrong one."""
        self.write_unsent()
        self.transport.close()

    async def _send_500(self) -> None:
        await self.send(
            {
                "type": "http.response.start",
                "status": 500,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", b"21"),
                    (b"connection", b"close"),
                ],
            }
        )
        await self.send({"type": "http.response.body", "body": b"Internal Server Error"})


def _tokens(value: bytes) -> list[bytes]:
    return [token.strip().lower() for token in value.split(b",")]


def _nothing() -> None:
    pass
