"""The RSGI bridge (frontdesk.server.rsgi_bridge) under a real Granian worker: what an ASGI
application sends and receives arrives whole, in pieces where it must, and the lifespan
runs around serving."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from frontdesk.server.rsgi_bridge import WHOLE_BODY_BYTES

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start(marks: Path, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    command = [sys.executable, "-m", "granian", "--interface", "rsgi", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--no-ws"]
    command += ["tests.support.bridged_app:create"]
    with (marks / "server.log").open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "BRIDGE_TEST_MARKS": str(marks), **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return process, f"http://127.0.0.1:{port}"


def _wait_until_serving(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError("the server ended before serving")
        try:
            httpx.get(base_url + "/echo", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    marks = tmp_path_factory.mktemp("bridge-marks")
    process, base_url = _start(marks)
    try:
        _wait_until_serving(base_url, process)
        yield base_url, marks
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)


def test_a_request_arrives_as_an_asgi_scope(served: tuple[str, Path]) -> None:
    base_url, marks = served
    answer = httpx.post(
        base_url + "/echo?a=1&b=%20two",
        content=b'{"x": 1}',
        headers={"x-one": "1", "content-type": "application/json"},
    )
    assert answer.status_code == 200
    seen = answer.json()
    assert seen["method"] == "POST"
    assert seen["path"] == "/echo"
    assert seen["query"] == "a=1&b=%20two"
    assert seen["client"][0] == "127.0.0.1"
    assert isinstance(seen["client"][1], int)
    assert ["x-one", "1"] in seen["headers"]
    # A small declared body is read in one call and handed over in one message.
    assert seen["pieces"] == [8]
    assert seen["size"] == 8
    # The lifespan ran before serving, and its state reaches each request.
    assert (marks / "started").read_text() == "yes"
    assert seen["state"] == "from the lifespan"


def test_a_large_body_is_handed_over_in_pieces(served: tuple[str, Path]) -> None:
    base_url, _marks = served
    body = os.urandom(WHOLE_BODY_BYTES * 4)
    seen = httpx.post(base_url + "/echo", content=body).json()
    assert seen["size"] == len(body)
    assert len(seen["pieces"]) > 1, "a body past the threshold must arrive piece by piece"


def test_a_chunked_body_is_handed_over_whole(served: tuple[str, Path]) -> None:
    base_url, _marks = served

    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b"z" * 1000

    seen = httpx.post(base_url + "/echo", content=chunks()).json()
    assert seen["size"] == 10_000


def test_a_bodiless_request_is_served(served: tuple[str, Path]) -> None:
    base_url, _marks = served
    seen = httpx.get(base_url + "/echo").json()
    assert seen["size"] == 0
    assert seen["method"] == "GET"


def test_a_streamed_answer_arrives_whole(served: tuple[str, Path]) -> None:
    base_url, _marks = served
    answer = httpx.get(base_url + "/stream")
    assert answer.status_code == 200
    assert answer.headers["x-kind"] == "stream"
    assert answer.text == "".join(f"part {number}\n" for number in range(5))


@pytest.mark.parametrize("path", ["/fail", "/silent"])
def test_an_application_that_does_not_answer_gets_a_500(
    served: tuple[str, Path], path: str
) -> None:
    base_url, _marks = served
    answer = httpx.get(base_url + path)
    assert answer.status_code == 500
    # The connection still serves the next request.
    assert httpx.get(base_url + "/echo").status_code == 200


def test_the_lifespan_shuts_down_with_the_worker(tmp_path: Path) -> None:
    process, base_url = _start(tmp_path)
    try:
        _wait_until_serving(base_url, process)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    assert (tmp_path / "stopped").read_text() == "yes"


def test_a_failed_startup_never_serves(tmp_path: Path) -> None:
    process, base_url = _start(tmp_path, BRIDGE_TEST_FAIL_STARTUP="1")
    try:
        deadline = time.monotonic() + 20
        while process.poll() is None and time.monotonic() < deadline:
            with pytest.raises(httpx.TransportError):
                httpx.get(base_url + "/echo", timeout=1)
            time.sleep(0.2)
        assert process.poll() is not None, "a worker whose startup failed must end"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not (tmp_path / "started").exists()
