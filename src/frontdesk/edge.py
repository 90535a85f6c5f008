"""What every HTTP request passes through: request id, Host check, CORS, access log, metrics.

One pure-ASGI layer rather than a middleware stack, because the MCP endpoint is the hot
path and each extra layer is paid on every call.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Awaitable, Callable

import orjson

from frontdesk.asgi import (
    JSON_CONTENT,
    Headers,
    Message,
    Receive,
    Scope,
    Send,
    header,
    headers_of,
    respond,
)
from frontdesk.body_deadline import BODY_TIMED_OUT
from frontdesk.config import Settings
from frontdesk.metrics import Metrics
from frontdesk.observability import REQUEST_ID, AccessLog

# A request id we accept from a proxy: short and plain, so it is safe in logs and headers.
_REQUEST_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")
_EXPOSED = b"WWW-Authenticate, Mcp-Session-Id, Retry-After, X-Request-Id"
_PREFLIGHT_HEADERS = (
    b"Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID,"
    b" X-Request-Id"
)
_METHODS = b"GET, POST, DELETE, OPTIONS"
_MISDIRECTED = orjson.dumps(
    {"error": "misdirected_request", "error_description": "This Host is not served here"}
)

# Methods as metric labels: those RFC 9110 defines, and "other" for any other, so that no
# client can add series at will (each is a file's worth of entries under every worker).
_METHOD_LABELS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
)

_OAUTH_ROUTES = frozenset(
    {"authorize", "consent", "callback", "login", "token", "register", "revoke"}
)

# A routed request: the edge hands over the request id and the headers every response to
# it must carry (request id, CORS), and learns the status that was answered.
Routed = Callable[[Scope, Receive, Send, str, Headers], Awaitable[int]]

# Request ids must be unique, not unguessable: they only tie log lines together. A
# generator of our own (seeded from the OS, per process) makes one at half the cost of
# reading the OS's random bytes on every request.
_request_ids = random.Random()  # noqa: S311 (ids, not secrets)


def new_request_id() -> str:
    # 16 hex digits; bytes.hex formats them in a third of the time an f-string takes.
    return _request_ids.getrandbits(64).to_bytes(8, "big").hex()


def route_label(path: str) -> str:
    """A bounded label for metrics: the route's shape, never a tenant key or a raw path."""
    if path.startswith("/v1/"):
        # The MCP endpoint first, and without splitting: it is the hot path.
        if path.endswith("/mcp") and path.count("/") == 3:
            return "mcp"
        parts = path.split("/")
        if len(parts) == 5 and parts[3] == "oauth" and parts[4] in _OAUTH_ROUTES:
            return "oauth/" + parts[4]
    if path.startswith("/.well-known/"):
        return "discovery"
    if path in ("/healthz", "/readyz", "/metrics", "/"):
        return path
    return "other"


def _host_name(host: str) -> str:
    """The Host header without its port; IPv6 literals keep their brackets."""
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0]


class Edge:
    def __init__(
        self, app: Routed, settings: Settings, metrics: Metrics, access_log: AccessLog | None
    ) -> None:
        self._app = app
        self._hosts = settings.accepted_hosts
        self._any_origin = "*" in settings.cors_origins
        self._origins = frozenset(origin.encode() for origin in settings.cors_origins)
        self._access_log = access_log
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send, "", [])
            return
        started = time.perf_counter()
        headers = headers_of(scope)
        supplied = headers.get(b"x-request-id")
        request_id = (
            supplied.decode() if supplied and _REQUEST_ID.fullmatch(supplied) else new_request_id()
        )
        bound = REQUEST_ID.set(request_id)
        # The headers every response carries. Handed to the route rather than added by a
        # wrapper around ``send``: a wrapper would cost two more coroutines per request.
        edge_headers = [(b"x-request-id", request_id.encode())]
        origin = headers.get(b"origin")
        if origin is not None and self._origin_allowed(origin):
            edge_headers.extend(self._cors_headers(origin))
        status = 500
        try:
            if not self._host_allowed(headers.get(b"host")):
                status = 421
                await respond(send, 421, _MISDIRECTED, [JSON_CONTENT, *edge_headers])
            elif scope["method"] == "OPTIONS" and origin is not None:
                status = await self._preflight(scope, send, origin, edge_headers)
            else:
                status = await self._app(scope, receive, send, request_id, edge_headers)
        finally:
            self._record(scope, status, started, request_id)
            REQUEST_ID.reset(bound)

    def _host_allowed(self, host: bytes | None) -> bool:
        if host is None:
            return False
        return _host_name(host.decode("latin-1").lower()) in self._hosts

    def _origin_allowed(self, origin: bytes) -> bool:
        return self._any_origin or origin in self._origins

    def _cors_headers(self, origin: bytes) -> list[tuple[bytes, bytes]]:
        return [
            (b"access-control-allow-origin", b"*" if self._any_origin else origin),
            (b"access-control-expose-headers", _EXPOSED),
            (b"vary", b"Origin"),
        ]

    async def _preflight(
        self, scope: Scope, send: Send, origin: bytes, edge_headers: Headers
    ) -> int:
        if not self._origin_allowed(origin):
            await respond(send, 403, headers=edge_headers)
            return 403
        requested = header(scope, b"access-control-request-headers")
        await respond(
            send,
            204,
            headers=[
                *edge_headers,
                (b"access-control-allow-methods", _METHODS),
                (b"access-control-allow-headers", requested or _PREFLIGHT_HEADERS),
                (b"access-control-max-age", b"600"),
            ],
        )
        return 204

    def _record(self, scope: Scope, status: int, started: float, request_id: str) -> None:
        elapsed = time.perf_counter() - started
        if BODY_TIMED_OUT in scope:
            status = 408
        route = route_label(scope["path"])
        method = scope["method"]
        self._metrics.record(
            route, method if method in _METHOD_LABELS else "other", status, elapsed
        )
        if self._access_log is not None:
            # The path only: query strings can carry codes and state that must not be logged.
            self._access_log.write(request_id, scope["method"], scope["path"], status, elapsed)


async def with_edge_headers(
    app: Callable[[Scope, Receive, Send], Awaitable[None]],
    scope: Scope,
    receive: Receive,
    send: Send,
    edge_headers: Headers,
) -> int:
    """Run a plain ASGI app (the framework routes) as a routed request: its response
    gets the edge's headers, and its status is returned."""
    status = 500

    async def send_with_headers(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            message.setdefault("headers", []).extend(edge_headers)
        await send(message)

    await app(scope, receive, send_with_headers)
    return status
