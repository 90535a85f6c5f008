"""The edge's one Host and Origin check, side by side with Starlette's TrustedHost and CORS
middlewares on the same requests: a request the edge hands straight to the application is
one the middlewares would have passed on untouched, so every answer is the same."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from frontdesk.config import Settings
from frontdesk.observability.metrics import Metrics
from frontdesk.web.asgi import Message, Receive, Scope, Send
from frontdesk.web.edge import Edge

pytestmark = pytest.mark.anyio

HOSTS = (
    None,
    b"127.0.0.1:8000",
    b"127.0.0.1",
    b"localhost:8000",
    b"LOCALHOST:8000",
    b"[::1]:8000",
    b"evil.example",
    b"127.0.0.1.evil.example",
    b"",
)
ORIGINS = (
    None,
    b"https://app.example",
    b"https://evil.example",
    b"http://127.0.0.1:8000",
    b"null",
)
# (method, asks for a preflight)
METHODS = (("POST", False), ("GET", False), ("OPTIONS", False), ("OPTIONS", True))


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    """What the edge protects: it names the request it was given."""
    await receive()
    headers = [(b"content-type", b"text/plain"), (b"x-seen", scope["method"].encode())]
    if scope["method"] == "GET":
        # Vary given twice: CORS folds them into one with Origin.
        headers += [(b"vary", b"Accept"), (b"vary", b"Accept-Encoding")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"served"})


async def answer(app: Any, method: str, headers: list[tuple[bytes, bytes]]) -> tuple[Any, ...]:
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/v1/acme/mcp",
        "raw_path": b"/v1/acme/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start, *bodies = sent
    return (
        start["status"],
        [(name, value) for name, value in start["headers"] if name != b"x-request-id"],
        b"".join(body.get("body", b"") for body in bodies),
    )


@pytest.mark.parametrize("cors_origins", [["*"], ["https://app.example"]])
async def test_the_edge_answers_as_starlettes_middlewares_do(
    make_settings: Callable[..., Settings], cors_origins: list[str]
) -> None:
    settings = make_settings(cors_origins=cors_origins)
    edge = Edge(application, settings, Metrics(), None)
    # The same edge with every request through the middlewares, as before the one check.
    through_middlewares = Edge(application, settings, Metrics(), None)
    through_middlewares._exact_hosts = frozenset()
    straight = 0
    for host, origin, (method, preflight) in itertools.product(HOSTS, ORIGINS, METHODS):
        headers = [(b"x-request-id", b"fixed")]
        if host is not None:
            headers.append((b"host", host))
        if origin is not None:
            headers.append((b"origin", origin))
        if preflight:
            headers.append((b"access-control-request-method", b"POST"))
        ours = await answer(edge, method, list(headers))
        theirs = await answer(through_middlewares, method, list(headers))
        assert ours == theirs, (host, origin, method, preflight)
        straight += origin is None and ours[0] == 200
    # The side by side covered requests the edge hands over itself.
    assert straight > 0
