"""The tests' alternating reverse proxy (tests/support/alternating_proxy.py) against two real
HTTP upstreams that echo what reached them."""

from __future__ import annotations

import contextlib
import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import orjson
import pytest

from tests.live.conftest import free_port
from tests.support.alternating_proxy import end_to_end, run_alternating_proxy


class _Echo(BaseHTTPRequestHandler):
    """Answers with its upstream number and the request it received, gzip-coded when the
    path asks, with a hop-by-hop field of its own."""

    protocol_version = "HTTP/1.1"
    server: _EchoServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        answer = orjson.dumps(
            {
                "upstream": self.server.number,
                "path": self.path,
                "headers": [[name.lower(), value] for name, value in self.headers.items()],
                "body": body.decode(),
            }
        )
        coded = self.path.startswith("/gzip")
        if coded:
            answer = gzip.compress(answer)
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Keep-Alive", "timeout=5")
        self.send_header("X-Upstream", str(self.server.number))
        if coded:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _EchoServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, number: int) -> None:
        super().__init__(("127.0.0.1", 0), _Echo)
        self.number = number


@contextlib.contextmanager
def echo_upstreams(count: int) -> Iterator[list[str]]:
    servers = [_EchoServer(number) for number in range(count)]
    threads = [
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        for server in servers
    ]
    for thread in threads:
        thread.start()
    try:
        yield [f"http://127.0.0.1:{server.server_address[1]}" for server in servers]
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join(timeout=5)


def test_requests_on_one_connection_alternate_between_the_upstreams() -> None:
    # One client, one kept-alive connection: the turn is taken per request.
    with (
        echo_upstreams(2) as upstreams,
        run_alternating_proxy(upstreams) as proxy,
        httpx.Client(base_url=proxy.base_url, timeout=10.0) as client,
    ):
        answers = [
            client.post("/v1/x/mcp?round=1", content=f"{number}", headers={"mcp-method": "m"})
            for number in range(5)
        ]
    assert [answer.json()["upstream"] for answer in answers] == [0, 1, 0, 1, 0]
    assert [answer.headers["x-upstream"] for answer in answers] == ["0", "1", "0", "1", "0"]
    assert all(answer.status_code == 201 for answer in answers)
    assert [answer.json()["body"] for answer in answers] == ["0", "1", "2", "3", "4"]
    recorded = proxy.forwarded()
    assert [(entry.upstream, entry.method, entry.path) for entry in recorded] == [
        (number % 2, "POST", "/v1/x/mcp?round=1") for number in range(5)
    ]
    assert [entry.body for entry in recorded] == [b"0", b"1", b"2", b"3", b"4"]
    assert all(entry.headers["mcp-method"] == "m" for entry in recorded)
    assert all(entry.status == 201 for entry in recorded)


def test_host_and_end_to_end_fields_pass_hop_by_hop_fields_do_not() -> None:
    """RFC 9110 section 7.6.1: Connection and the fields it names stay on their hop."""
    public = f"127.0.0.1:{free_port()}"
    with echo_upstreams(1) as upstreams, run_alternating_proxy(upstreams) as proxy:
        answer = httpx.post(
            f"{proxy.base_url}/echo",
            content=b"{}",
            headers={
                "host": public,
                "connection": "keep-alive, x-secret-hop",
                "x-secret-hop": "dropped",
                "keep-alive": "timeout=5",
                "x-kept": "yes",
            },
            timeout=10.0,
        )
    assert answer.status_code == 201, answer.text
    received = dict(answer.json()["headers"])
    assert received["host"] == public
    assert received["x-kept"] == "yes"
    assert received["via"] == "1.1 alternating-proxy"
    assert received["content-length"] == "2"
    assert "x-secret-hop" not in received
    assert "keep-alive" not in received
    assert "keep-alive" not in answer.headers


def test_a_coded_answer_passes_as_the_upstream_coded_it() -> None:
    with (
        echo_upstreams(1) as upstreams,
        run_alternating_proxy(upstreams) as proxy,
        httpx.stream("POST", f"{proxy.base_url}/gzip", content=b"x", timeout=10.0) as answer,
    ):
        raw = b"".join(answer.iter_raw())
    assert answer.headers["content-encoding"] == "gzip"
    assert int(answer.headers["content-length"]) == len(raw)
    assert orjson.loads(gzip.decompress(raw))["path"] == "/gzip"


def test_an_unreachable_upstream_is_a_bad_gateway() -> None:
    with run_alternating_proxy([f"http://127.0.0.1:{free_port()}"]) as proxy:
        answer = httpx.post(f"{proxy.base_url}/", content=b"", timeout=10.0)
    assert answer.status_code == 502
    [recorded] = proxy.forwarded()
    assert recorded.status == 502


def test_connection_options_are_read_case_blind() -> None:
    headers = [
        (b"Connection", b"Close, X-Hop"),
        (b"x-hop", b"1"),
        (b"TE", b"trailers"),
        (b"Transfer-Encoding", b"chunked"),
        (b"x-end", b"2"),
    ]
    assert end_to_end(headers) == [(b"x-end", b"2")]


def test_no_upstream_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one upstream"), run_alternating_proxy([]):
        pass
