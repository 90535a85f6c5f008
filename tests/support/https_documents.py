"""A real HTTPS server on 127.0.0.1 for tests, with its own certificate authority.

It serves what a test tells it to at each path (a body, a status, headers such as
Cache-Control, Location or Content-Encoding), can hold an answer until the test releases
it, and can drip a body a byte at a time. It runs in a thread, so it answers both this
process (an in-process ``ClientDocuments`` given ``ssl_context()``) and a ``frontdesk serve``
started by the test (given ``environment()``: ``SSL_CERT_FILE`` names the CA bundle, which
httpx's default context then trusts instead of certifi's).

Typical use::

    with run_https_documents(tmp_path) as server:
        server.serve_json("/client.json", {"client_id": server.url("/client.json"), ...})
        outbound = OutboundClients(tls=server.ssl_context())
        ...
        assert server.requests("/client.json") == 1
"""

from __future__ import annotations

import contextlib
import gzip
import ssl
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import trustme

# How long a held answer or a drip may last at most, should a test never release it.
LONGEST_ANSWER_SECONDS = 30.0
JSON_HEADERS: Mapping[str, str] = {"Content-Type": "application/json"}


@dataclass
class Answer:
    body: bytes = b""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=lambda: dict(JSON_HEADERS))
    # Answer only once this is set.
    hold: threading.Event | None = None
    # Send the body one byte per this many seconds, without a Content-Length.
    drip_seconds: float | None = None


class HttpsDocuments:
    def __init__(self, server: _Server, ca: trustme.CA, ca_path: Path) -> None:
        self._server = server
        self._ca = ca
        self.ca_path = ca_path
        self.base_url = f"https://127.0.0.1:{server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def serve(self, path: str, answer: Answer) -> None:
        with self._server.lock:
            self._server.answers[path] = answer

    def serve_json(
        self, path: str, document: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        self.serve(
            path, Answer(orjson.dumps(document), headers={**JSON_HEADERS, **(headers or {})})
        )

    def serve_gzip(self, path: str, raw: bytes) -> None:
        """``raw`` gzip-compressed, as application/json with Content-Encoding: gzip."""
        headers = {**JSON_HEADERS, "Content-Encoding": "gzip"}
        self.serve(path, Answer(gzip.compress(raw), headers=headers))

    def requests(self, path: str) -> int:
        """How many requests for ``path`` have arrived."""
        with self._server.lock:
            return self._server.counts[path]

    def wait_for_request(self, path: str, timeout: float) -> bool:
        """Block until a request for ``path`` has arrived (False after ``timeout``)."""
        with self._server.arrived:
            return self._server.arrived.wait_for(
                lambda: self._server.counts[path] > 0, timeout=timeout
            )

    def ssl_context(self) -> ssl.SSLContext:
        """A client context that trusts this server's CA (and verifies as usual)."""
        context = ssl.create_default_context()
        self._ca.configure_trust(context)
        return context

    def environment(self) -> dict[str, str]:
        """What a child process needs to trust this server through httpx's defaults."""
        return {"SSL_CERT_FILE": str(self.ca_path)}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.context = context
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.answers: dict[str, Answer] = {}
        self.counts: Counter[str] = Counter()
        self.stopping = threading.Event()

    def get_request(self) -> tuple[Any, Any]:
        connection, address = super().get_request()
        # The handshake happens in the connection's own thread, so one slow client does not
        # stall the others.
        wrapped = self.context.wrap_socket(
            connection, server_side=True, do_handshake_on_connect=False
        )
        return wrapped, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gives up mid-answer (a deadline, a size limit) is what tests
        # provoke; nothing to report.
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = self.path
        with self.server.arrived:
            self.server.counts[path] += 1
            answer = self.server.answers.get(path)
            self.server.arrived.notify_all()
        if answer is None:
            answer = Answer(b'{"error": "not found"}', status=404)
        if answer.hold is not None and not self._wait(answer.hold):
            return
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.drip_seconds is None:
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            return
        self.send_header("Connection", "close")
        self.end_headers()
        for index in range(len(answer.body)):
            self.wfile.write(answer.body[index : index + 1])
            self.wfile.flush()
            if self.server.stopping.wait(answer.drip_seconds):
                return

    def _wait(self, hold: threading.Event) -> bool:
        waited = 0.0
        while not hold.wait(0.05):
            waited += 0.05
            if self.server.stopping.is_set() or waited > LONGEST_ANSWER_SECONDS:
                return False
        return True

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def run_https_documents(
    directory: Path, names: Sequence[str] = ("127.0.0.1", "localhost", "::1")
) -> Iterator[HttpsDocuments]:
    """Start the server (its CA bundle written into ``directory``), stop it on exit. Its
    certificate is valid for ``names``."""
    ca = trustme.CA()
    certificate = ca.issue_cert(*names)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate.configure_cert(context)
    ca_path = directory / "https-documents-ca.pem"
    ca.cert_pem.write_to_path(str(ca_path))
    server = _Server(context)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="https-documents",
        daemon=True,
    )
    thread.start()
    try:
        yield HttpsDocuments(server, ca, ca_path)
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
