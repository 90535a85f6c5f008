"""Real HTTP backends on loopback for the ``http`` provider tests, and the calls that reach them.

``ScriptedBackend`` is a standard-library HTTP/1.1 server in a thread on a free port: every
request is recorded, every accepted TCP connection counted, and each path answers the way
the test scripted it (JSON, raw bytes, a chunked stream, a hang until released). Frontdesk
reaches it through its own shared httpx client, exactly as it reaches a company's backend.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import mcp.types

from frontdesk.tools.exchange import MAX_RESPONSE_BYTES
from tests.support.jsonrpc import tool_call, tool_text
from tests.support.tool_annotations import read_only

Json = dict[str, Any]
Responder = Callable[["Handler"], None]

SECRET = "backend-secret-for-the-tests-0123456789"
# The longest a test waits for something that should happen at once.
DEADLINE = 10.0
# How long a hanging backend holds a request before giving up on being released.
HANG_LIMIT = 30.0
# A streaming backend stops after this much, whether or not anyone reads it.
STREAM_LIMIT = 64 * MAX_RESPONSE_BYTES


@dataclass(frozen=True)
class Received:
    """One request as the backend got it: path, headers (lower-case names), raw body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Json:
        document: Json = json.loads(self.body)
        return document


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    # Idle keep-alive connections end on their own once a test is over.
    timeout = HANG_LIMIT
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        backend = self.server.backend
        backend.record(Received(self.command, self.path, headers, body))
        responder = backend.routes.get(self.path.partition("?")[0], reply_status(404))
        try:
            responder(self)
        except OSError:
            # Frontdesk hung up (a cap, a timeout): nothing more to say on this connection.
            self.close_connection = True

    def send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read what the backend recorded instead."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # Hundreds of calls may connect at once (tests/resilience); the default backlog of 5
    # would drop connections that a real backend's server would accept.
    request_queue_size = 512

    def __init__(self, backend: ScriptedBackend) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.backend = backend

    def get_request(self) -> Any:
        accepted = super().get_request()
        self.backend.count_connection()
        return accepted


@dataclass
class ScriptedBackend:
    """A company backend whose every answer the test decides."""

    routes: dict[str, Responder] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    connections: int = 0
    # Set to let hanging answers go (and at teardown).
    release: threading.Event = field(default_factory=threading.Event)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _server: _Server | None = None

    def start(self) -> None:
        self._server = _Server(self)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def record(self, request: Received) -> None:
        with self._changed:
            self.received.append(request)
            self._changed.notify_all()

    def count_connection(self) -> None:
        with self._changed:
            self.connections += 1

    def _wait_for(self, count: int, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self.received) >= count, timeout)

    async def requests_arrived(self, count: int) -> None:
        """Wait until ``count`` requests have reached the backend; fail after DEADLINE."""
        arrived = await anyio.to_thread.run_sync(self._wait_for, count, DEADLINE)
        assert arrived, f"{count} requests expected, {len(self.received)} arrived"


# Responders --------------------------------------------------------------------------------


def reply_json(document: Any, status: int = 200) -> Responder:
    return reply_raw(json.dumps(document).encode(), status)


def reply_raw(body: bytes, status: int = 200, content_type: str = "application/json") -> Responder:
    def respond(handler: Handler) -> None:
        handler.send(status, body, content_type)

    return respond


def reply_status(status: int) -> Responder:
    """A status with a body full of internals a caller must never see."""
    return reply_json({"error": "Traceback: KeyError at /srv/internal/db.py line 42"}, status)


def reply_redirect(location: str) -> Responder:
    def respond(handler: Handler) -> None:
        handler.send_response(302)
        handler.send_header("location", location)
        handler.send_header("content-length", "0")
        handler.end_headers()

    return respond


def reply_chunked(body: bytes, chunk_size: int = 64 * 1024) -> Responder:
    """``body`` with Transfer-Encoding: chunked, so no length is declared up front."""

    def respond(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        for start in range(0, len(body), chunk_size):
            chunk = body[start : start + chunk_size]
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        handler.wfile.write(b"0\r\n\r\n")

    return respond


def reply_endless_stream(handler: Handler) -> None:
    """A chunked body that goes on until the reader leaves (or STREAM_LIMIT)."""
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    chunk = b'{"text": "' + b"x" * (64 * 1024)
    for _ in range(STREAM_LIMIT // len(chunk)):
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def reply_declared_oversize(handler: Handler) -> None:
    """Announces more than the cap, sends a few bytes, then waits: only the header can tell."""
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(2 * MAX_RESPONSE_BYTES))
    handler.end_headers()
    handler.wfile.write(b'{"text": "')
    handler.server.backend.release.wait(HANG_LIMIT)


def reply_after_release(then: Responder) -> Responder:
    """Holds the request until the test sets ``release``, then answers with ``then``."""

    def respond(handler: Handler) -> None:
        handler.server.backend.release.wait(HANG_LIMIT)
        then(handler)

    return respond


# Companies and calls -----------------------------------------------------------------------


def http_tool(
    name: str,
    url: str,
    *,
    access: str = "public",
    timeout: float | None = None,
    secret: str | None = SECRET,
    secret_env: str | None = None,
    output_schema: Json | None = None,
) -> Json:
    """A tool answered by the backend at ``url``."""
    provider: Json = {"type": "http", "url": url}
    if secret_env is not None:
        provider["secret_env"] = secret_env
    elif secret is not None:
        provider["secret"] = secret
    tool: Json = {"name": name, "description": f"{name}, answered by a backend.", "access": access}
    tool["annotations"] = read_only(name)
    if timeout is not None:
        tool["timeout"] = timeout
    if output_schema is not None:
        tool["output_schema"] = output_schema
    tool["provider"] = provider
    return tool


# The tool tests' names for tests/support/jsonrpc.py's builders.
rpc_call = tool_call
text_of = tool_text


def company(tenant_key: str, *tools: Json, signin: bool = False) -> Json:
    document: Json = {"tenant_key": tenant_key, "name": tenant_key.title(), "tools": list(tools)}
    if signin:
        document["signin"] = {"login": {"type": "dev"}}
    return document


async def post_mcp(
    client: httpx.AsyncClient,
    tenant: str,
    body: Json | list[Json],
    *,
    token: str | None = None,
    request_id: str | None = None,
) -> httpx.Response:
    headers = {"accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if request_id is not None:
        headers["x-request-id"] = request_id
    return await client.post(f"/v1/{tenant}/mcp", json=body, headers=headers)


async def call_tool(
    client: httpx.AsyncClient,
    tenant: str,
    name: str,
    arguments: Json | None = None,
    *,
    token: str | None = None,
    request_id: str | None = None,
) -> Json:
    """The result of one tools/call, which must come back as a 200 with a valid MCP result."""
    response = await post_mcp(
        client, tenant, tool_call(name, arguments), token=token, request_id=request_id
    )
    assert response.status_code == 200, response.text
    reply: Json = response.json()
    assert "error" not in reply, reply
    result: Json = reply["result"]
    mcp.types.CallToolResult.model_validate(result)
    return result


def assert_plain_error(result: Json, expected: str, backend: ScriptedBackend | None = None) -> None:
    """An isError result whose only text is ``expected``, with nothing internal in it."""
    assert result["isError"] is True, result
    text = tool_text(result)
    assert text == expected
    for internal in ("127.0.0.1", "localhost", "Traceback", "Error", "/srv/", "httpx"):
        assert internal not in text
    if backend is not None:
        assert str(backend.port) not in text
