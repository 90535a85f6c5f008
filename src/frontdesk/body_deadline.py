"""A deadline on each request's body: the one limit on slow clients the HTTP server lacks.

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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import orjson

from frontdesk.asgi import JSON_CONTENT, Message, Receive, Scope, Send, headers_of

App = Callable[[Scope, Receive, Send], Awaitable[None]]

# Set in the scope of a request whose body timed out: the edge logs and counts its 408,
# whatever the application made of the disconnection.
BODY_TIMED_OUT = "frontdesk.body_timed_out"

_TIMED_OUT = orjson.dumps(
    {"error": "request_timeout", "error_description": "The request body was not received in time"}
)
_TIMEOUT_HEADERS = [
    JSON_CONTENT,
    (b"content-length", str(len(_TIMED_OUT)).encode()),
    (b"connection", b"close"),
]


class BodyDeadline:
    """The application, with each request's body due within ``seconds``."""

    def __init__(self, app: App, seconds: float) -> None:
        self._app = app
        self._seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _announces_body(scope):
            await self._app(scope, receive, send)
            return
        body = TimedBody(scope, receive, send, self._seconds)
        try:
            await self._app(scope, body.receive, body.send)
        except Exception:
            # Once the client has its 408, whatever the application makes of the
            # disconnection it was told of (a framework answering it with a 500 that can
            # no longer be sent) concerns no one.
            if not body.timed_out:
                raise


class TimedBody:
    """The ``receive`` of one request, every wait for its body bounded by one deadline, and
    its ``send``, which closes the connection after an answer given before the whole body
    was read."""

    __slots__ = ("_deadline", "_receive", "_scope", "_send", "body_done", "timed_out")

    def __init__(self, scope: Scope, receive: Receive, send: Send, seconds: float) -> None:
        self._scope = scope
        self._receive = receive
        self._send = send
        # On the event loop's clock, the one asyncio.timeout_at reads.
        self._deadline = asyncio.get_running_loop().time() + seconds
        self.body_done = False
        self.timed_out = False

    async def receive(self) -> Message:
        if self.timed_out:
            return {"type": "http.disconnect"}
        if self.body_done:
            # Past the body, a receive waits for the client to go away: as long as it takes.
            return await self._receive()
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            self.timed_out = True
            self._scope[BODY_TIMED_OUT] = True
            await self._answer_timeout()
            return {"type": "http.disconnect"}
        if message["type"] != "http.request" or not message.get("more_body", False):
            self.body_done = True
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

    async def _answer_timeout(self) -> None:
        try:
            await self._send(
                {"type": "http.response.start", "status": 408, "headers": _TIMEOUT_HEADERS}
            )
            await self._send({"type": "http.response.body", "body": _TIMED_OUT})
        except Exception:  # noqa: S110
            # The application had started its response already, or the client went away:
            # there is no one left to tell.
            pass


def _announces_body(scope: Scope) -> bool:
    headers = headers_of(scope)
    length = headers.get(b"content-length")
    return (length is not None and length != b"0") or b"transfer-encoding" in headers
