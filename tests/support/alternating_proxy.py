"""A real HTTP reverse proxy on loopback that sends each request to the next of its upstreams.

It plays a round-robin load balancer in front of several ``frontdesk serve`` processes: the
choice is made per request, not per connection, so the requests a client sends on one kept-alive
connection still alternate. Each forwarded exchange is recorded (which upstream answered, the
method, path, a few request headers, both bodies) so a test can show which instance served
which round of a conversation.

It runs uvicorn in a thread of the test process and forwards with httpx, so it answers the
test itself and any process the test starts (a Node.js client). Typical use::

    with run_alternating_proxy([a.base_url, b.base_url]) as proxy:
        ...  # point the client at proxy.base_url
        assert {exchange.upstream for exchange in proxy.forwarded()} == {0, 1}
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
import uvicorn

START_DEADLINE = 5.0
STOP_DEADLINE = 10.0
POLL_INTERVAL = 0.01
# Each forwarded request, from connecting to the upstream to its last byte.
FORWARD_TIMEOUT = 30.0
# A test proxy has no business with larger bodies; a bigger one is refused with 413.
LARGEST_BODY = 10 * 1024 * 1024
# The request headers kept in the record: what routes an MCP message, never credentials.
RECORDED_HEADERS = ("host", "mcp-method", "mcp-name", "mcp-protocol-version")
# RFC 9110 section 7.6.1: hop-by-hop fields that are removed before forwarding, beside those
# the Connection field names. Content-Length is not hop-by-hop, but the body is framed anew
# on each hop (section 8.6), so it is dropped here and recomputed.
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"proxy-connection",
        b"keep-alive",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"content-length",
    }
)
# RFC 9110 section 7.6.3: a gateway sends Via in each request it forwards.
VIA = b"1.1 alternating-proxy"

RawHeaders = list[tuple[bytes, bytes]]


class AlternatingProxyError(RuntimeError):
    """The proxy could not be started or stopped."""


@dataclass(frozen=True)
class Forwarded:
    """One request as forwarded, and the answer the upstream gave (status 502 if none)."""

    upstream: int
    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    status: int
    answer: bytes

    def json_body(self) -> Any:
        """The request body as JSON, or None when it is not JSON."""
        return _json_or_none(self.body)

    def json_answer(self) -> Any:
        """The answer's body as JSON, or None when it is not JSON (or is content-coded)."""
        return _json_or_none(self.answer)


def _json_or_none(document: bytes) -> Any:
    try:
        return orjson.loads(document)
    except orjson.JSONDecodeError:
        return None


def end_to_end(headers: Sequence[tuple[bytes, bytes]]) -> RawHeaders:
    """``headers`` without the hop-by-hop fields, nor those the Connection field names
    (RFC 9110 section 7.6.1)."""
    named = {
        option.strip().lower()
        for name, value in headers
        if name.lower() == b"connection"
        for option in value.split(b",")
    }
    return [
        (name, value)
        for name, value in headers
        if name.lower() not in HOP_BY_HOP and name.lower() not in named
    ]


class AlternatingProxy:
    """An ASGI application forwarding each request to the next upstream in turn."""

    def __init__(self, upstreams: Sequence[str]) -> None:
        if not upstreams:
            raise ValueError("an alternating proxy needs at least one upstream")
        self.upstreams = [upstream.rstrip("/") for upstream in upstreams]
        self.base_url = ""
        self._turns = itertools.count()
        self._lock = threading.Lock()
        self._forwarded: list[Forwarded] = []
        self._client: httpx.AsyncClient | None = None

    def forwarded(self) -> list[Forwarded]:
        """Every exchange so far, in the order the requests arrived."""
        with self._lock:
            return list(self._forwarded)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._forward(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        # The client lives on uvicorn's event loop, so it is opened and closed there.
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._client = httpx.AsyncClient(
                    timeout=FORWARD_TIMEOUT, follow_redirects=False, trust_env=False
                )
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._client is not None:
                    await self._client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _forward(self, scope: Any, receive: Any, send: Any) -> None:
        body = await _read_body(receive)
        if body is None:
            await _respond(send, 413, [], b"request body too large for the test proxy\n")
            return
        upstream = next(self._turns) % len(self.upstreams)
        method: str = scope["method"]
        target: bytes = scope.get("raw_path") or scope["path"].encode("ascii")
        if scope["query_string"]:
            target += b"?" + scope["query_string"]
        received: RawHeaders = list(scope["headers"])
        status, headers, answer = await self._exchange(
            upstream, method, target, [*end_to_end(received), (b"via", VIA)], body
        )
        recorded = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in received
            if name.decode("latin-1") in RECORDED_HEADERS
        }
        exchange = Forwarded(
            upstream, method, target.decode("latin-1"), recorded, body, status, answer
        )
        # Recorded before answering: once a client has its answer, the record holds it.
        with self._lock:
            self._forwarded.append(exchange)
        await _respond(send, status, headers, answer, head=method == "HEAD")

    async def _exchange(
        self, upstream: int, method: str, target: bytes, headers: RawHeaders, body: bytes
    ) -> tuple[int, RawHeaders, bytes]:
        assert self._client is not None, "the proxy's lifespan has not started"
        url = httpx.URL(self.upstreams[upstream]).copy_with(raw_path=target)
        # httpx.Request, not client.build_request: the client's default headers (its own
        # Accept-Encoding, User-Agent) must not be added to what the client sent. Host is
        # forwarded as received, so the upstream checks the address the client used.
        request = httpx.Request(method, url, headers=headers, content=body)
        try:
            response = await self._client.send(request, stream=True)
            try:
                # Raw: still content-coded, as the upstream sent it with its Content-Encoding.
                answer = b"".join([chunk async for chunk in response.aiter_raw()])
            finally:
                await response.aclose()
        except httpx.HTTPError as error:
            return 502, [(b"content-type", b"text/plain")], f"{error!r}\n".encode()
        forwarded = end_to_end(response.headers.raw)
        if method == "HEAD":
            forwarded += [
                (name, value)
                for name, value in response.headers.raw
                if name.lower() == b"content-length"
            ]
        return response.status_code, forwarded, answer


async def _read_body(receive: Any) -> bytes | None:
    """The whole request body, or None beyond LARGEST_BODY."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > LARGEST_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _respond(
    send: Any, status: int, headers: RawHeaders, body: bytes, *, head: bool = False
) -> None:
    """Send the answer, its length recomputed (a HEAD answer keeps the upstream's)."""
    if head:
        body = b""
    elif status not in (204, 304):
        headers = [*headers, (b"content-length", str(len(body)).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def run_alternating_proxy(upstreams: Sequence[str], *, port: int = 0) -> Iterator[AlternatingProxy]:
    """The proxy listening on 127.0.0.1 (``port``, or any free one), stopped on exit."""
    proxy = AlternatingProxy(upstreams)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    proxy.base_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    config = uvicorn.Config(
        proxy,
        loop="asyncio",
        lifespan="on",
        log_level="warning",
        access_log=False,
        # The upstream's own Server and Date fields pass through instead.
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=int(STOP_DEADLINE / 2),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name="alternating-proxy", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + START_DEADLINE
        # uvicorn says it has started only through this flag.
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise AlternatingProxyError(
                    f"the alternating proxy did not start within {START_DEADLINE:g}s"
                )
            time.sleep(POLL_INTERVAL)
        yield proxy
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_DEADLINE)
        listener.close()
    if thread.is_alive():
        raise AlternatingProxyError(f"the alternating proxy did not stop within {STOP_DEADLINE:g}s")
