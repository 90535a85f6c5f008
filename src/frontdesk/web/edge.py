"""The outermost layer every HTTP request passes: request id, access log, metrics, and the
two refusals Starlette's middlewares do not make.

Host checking and CORS are Starlette's (``TrustedHostMiddleware``, ``CORSMiddleware``,
built in ``protect``); the edge stays outside them so that the requests they refuse are
logged and counted too, and carry a request id. A request without ``Origin`` whose Host
names an accepted host exactly, nearly every request, is one both middlewares pass on
untouched (the Host check accepts it, and CORS has nothing to add without an Origin): the
edge, which has read both headers already, hands it to the application itself, and only
the rest through the middlewares (tests/test_edge_host_origin.py compares the answers).
What the edge adds is only what they lack:

- a request with more than one ``Host`` is refused (400): the middleware reads the first,
  and a proxy or the application behind it could read another (RFC 9112 section 3.2:
  "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request
  message that ... contains more than one Host header field line");
- a present ``Origin`` that is neither allowed nor the service's own is refused (403) on
  every request, not only on a preflight: MCP 2025-11-25, Transports, "Security Warning":
  "If the Origin header is present and invalid, servers MUST respond with HTTP Forbidden
  403". The CORS middleware only withholds its headers, which stops a browser reading the
  answer but not the request from being served.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Awaitable, Callable, Iterable

import orjson
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware

from frontdesk.config import Settings
from frontdesk.observability.logs import REQUEST_ID
from frontdesk.observability.metrics import Metrics
from frontdesk.web.access_log import AccessLog
from frontdesk.web.asgi import JSON_CONTENT, Message, Receive, Scope, Send, headers_of, respond
from frontdesk.web.body_deadline import BODY_ANSWERED

App = Callable[[Scope, Receive, Send], Awaitable[None]]

# Where the edge leaves the request's id for the routes (``request_id_of``).
_REQUEST_ID_KEY = "frontdesk.request_id"
# A request id we accept from a proxy: short and plain, so it is safe in logs and headers.
_REQUEST_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")

# The methods an MCP client uses (Streamable HTTP: POST, GET for a stream, DELETE to end
# a session) and the OAuth endpoints' GET and POST.
CORS_METHODS = ("GET", "POST", "DELETE", "OPTIONS")
# What a browser client must be able to read: the sign-in challenge (MCP authorization,
# RFC 9728 section 5.1), the session, when to retry, and the id to quote to support.
CORS_EXPOSED = ("WWW-Authenticate", "Mcp-Session-Id", "Retry-After", "X-Request-Id")
# Any request header a preflight asks for is allowed: MCP 2026-07-28 clients send one
# Mcp-Param-<Name> header per declared tool argument, names no fixed list can hold, and
# bearer tokens, never cookies, carry identity here. The middleware answers with the asked
# names rather than a literal "*", which the Fetch standard would not let cover
# Authorization.
CORS_ALLOWED_HEADERS = ("*",)
CORS_MAX_AGE_SECONDS = 600

# The answer to a duplicate Host: the same as the Host middleware's own refusal.
_INVALID_HOST = b"Invalid host header"
_PLAIN_TEXT = (b"content-type", b"text/plain; charset=utf-8")
_VARY_ORIGIN = (b"vary", b"Origin")
_FORBIDDEN_ORIGIN = orjson.dumps(
    {"error": "forbidden_origin", "error_description": "Requests from this Origin are refused"}
)

# Methods as metric labels: those RFC 9110 defines, and "other" for any other, so that no
# client can add series at will (each is a file's worth of entries under every worker).
_METHOD_LABELS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
)

_OAUTH_ROUTES = frozenset(
    {"authorize", "consent", "callback", "login", "token", "register", "revoke"}
)

# Request ids must be unique, not unguessable: they only tie log lines together. A
# generator of our own (seeded from the OS, per process) makes one at half the cost of
# reading the OS's random bytes on every request.
_request_ids = random.Random()  # noqa: S311 (ids, not secrets)


def new_request_id() -> str:
    # 16 hex digits; bytes.hex formats them faster than an f-string, once per request
    # (docs/decisions/hot-path-records.md).
    return _request_ids.getrandbits(64).to_bytes(8, "big").hex()


def request_id_of(scope: Scope) -> str:
    """The id the edge gave this request."""
    request_id: str = scope[_REQUEST_ID_KEY]
    return request_id


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


def tenant_key_of(path: str) -> str | None:
    """The tenant key a company's path (``/v1/{tenantKey}/...``) names, as written: the
    metrics name it only when it is an active company's (``Metrics.record_company``)."""
    if not path.startswith("/v1/"):
        return None
    end = path.find("/", 4)
    return path[4:] if end == -1 else path[4:end]


def protect(app: App, settings: Settings) -> App:
    """``app`` behind Starlette's Host check (DNS-rebinding protection) and CORS."""
    cors = CORSMiddleware(
        app,
        allow_origins=settings.cors_origins,
        allow_methods=CORS_METHODS,
        allow_headers=CORS_ALLOWED_HEADERS,
        expose_headers=CORS_EXPOSED,
        max_age=CORS_MAX_AGE_SECONDS,
    )
    # The middleware tries the names in turn: the base URL's own, which nearly every
    # request names, first. Named in full, so no redirect to a "www." name either.
    base_host = settings.base_host.lower()
    hosts = sorted(settings.accepted_hosts, key=lambda host: (host != base_host, host))
    return TrustedHostMiddleware(cors, allowed_hosts=hosts, www_redirect=False)


def varying_with_origin(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with Origin among the Vary values, as Starlette's CORS middleware adds
    it to an answer without Origin (what the answer says depends on the Origin sent, so a
    cache must not hand it to a request with one: RFC 9110 section 12.5.5)."""
    answer = list(headers)
    varies = [index for index, (name, _value) in enumerate(answer) if name == b"vary"]
    if not varies:
        answer.append(_VARY_ORIGIN)
        return answer
    values = [answer[index][1].decode("latin-1") for index in varies]
    answer[varies[0]] = (b"vary", ", ".join([*values, "Origin"]).encode("latin-1"))
    for index in reversed(varies[1:]):
        del answer[index]
    return answer


class Edge:
    def __init__(
        self, app: App, settings: Settings, metrics: Metrics, access_log: AccessLog | None
    ) -> None:
        self._app = app
        self._protected = protect(app, settings)
        # The Host values the Host check accepts as they are (no port), as bytes.
        self._exact_hosts = frozenset(
            host.encode("latin-1") for host in settings.accepted_hosts if "*" not in host
        )
        # None when every origin is allowed ("*", the default).
        self._origins: frozenset[bytes] | None = (
            None
            if "*" in settings.cors_origins
            else frozenset(origin.encode() for origin in settings.cors_origins)
        )
        self._access_log = access_log
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = headers_of(scope)
        supplied = headers.get(b"x-request-id")
        request_id = (
            supplied.decode() if supplied and _REQUEST_ID.fullmatch(supplied) else new_request_id()
        )
        scope[_REQUEST_ID_KEY] = request_id
        bound = REQUEST_ID.set(request_id)
        # The events deeper down (sign-ins, tokens, backend calls) count in this app's metrics.
        recording = self._metrics.entered()
        request_id_header = (b"x-request-id", request_id.encode())
        status = 0
        # Whether the request bypasses the middlewares, which CORS would have marked as
        # varying with Origin.
        straight = b"origin" not in headers and self._is_exact_host(headers)

        async def send_with_request_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                answer_headers = message.get("headers", ())
                if straight:
                    answer_headers = varying_with_origin(answer_headers)
                message["headers"] = [*answer_headers, request_id_header]
            await send(message)

        try:
            if self._has_two_hosts(scope):
                status = 400
                await respond(send, 400, _INVALID_HOST, [_PLAIN_TEXT, request_id_header])
            elif self._refuses_origin(headers):
                status = 403
                await respond(send, 403, _FORBIDDEN_ORIGIN, [JSON_CONTENT, request_id_header])
            elif straight:
                await self._app(scope, receive, send_with_request_id)
            else:
                await self._protected(scope, receive, send_with_request_id)
        except BaseException:
            # Nothing answered yet: the server answers 500 for the failure.
            status = status or 500
            raise
        finally:
            # No answer and no failure: the client went away first (499, as nginx logs it).
            self._record(scope, status or 499, started, request_id)
            REQUEST_ID.reset(bound)
            self._metrics.left(recording)

    @staticmethod
    def _has_two_hosts(scope: Scope) -> bool:
        found = False
        for name, _value in scope["headers"]:
            if name == b"host":
                if found:
                    return True
                found = True
        return False

    def _is_exact_host(self, headers: dict[bytes, bytes]) -> bool:
        # What TrustedHostMiddleware compares: the value before the first ":", as sent.
        host = headers.get(b"host")
        return host is not None and host.partition(b":")[0] in self._exact_hosts

    def _refuses_origin(self, headers: dict[bytes, bytes]) -> bool:
        origin = headers.get(b"origin")
        # No Origin: not a browser's request, nothing to check (MCP: "if ... present").
        if origin is None or self._origins is None or origin in self._origins:
            return False
        # A page of this service posting back to it (the sign-in and consent forms) sends
        # its own origin, whose host is the request's Host, which the Host check then
        # vouches for. A rebinding page's origin names the attacker's host instead.
        return origin.partition(b"://")[2] != headers.get(b"host")

    def _record(self, scope: Scope, status: int, started: float, request_id: str) -> None:
        elapsed = time.perf_counter() - started
        # What the body's layer answered (408, 429), whatever the application then tried.
        status = scope.get(BODY_ANSWERED, status)
        path: str = scope["path"]
        route = route_label(path)
        method = scope["method"]
        self._metrics.record(
            route, method if method in _METHOD_LABELS else "other", status, elapsed
        )
        tenant_key = tenant_key_of(path)
        if tenant_key is not None:
            self._metrics.record_company(tenant_key, route, status, elapsed)
        if self._access_log is not None:
            # The path only: query strings can carry codes and state that must not be logged.
            self._access_log.record(scope, request_id, status, elapsed)
