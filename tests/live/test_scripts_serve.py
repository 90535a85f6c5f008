"""`./scripts/serve` as a developer runs it: the demo backend and the advertised URLs follow
``--port``, Ctrl-C stops everything with one signal to the service, and a demo backend
that cannot listen stops the script before the service starts (the demo company would
otherwise call whatever holds the port)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import orjson
import pytest

from frontdesk.server.http_server import SHUTDOWN_GRACE_SECONDS, STOP_MARGIN_SECONDS
from tests.conftest import ROOT
from tests.live.conftest import START_DEADLINE, free_port

# alone: its figures (latency, deadlines) need the machine's cores (tests/support/alone.py).
pytestmark = [pytest.mark.live, pytest.mark.alone]

SCRIPT = ROOT / "scripts" / "serve"
STOP_WITHIN = SHUTDOWN_GRACE_SECONDS + STOP_MARGIN_SECONDS
SLACK = 2.0


def two_free_ports() -> int:
    """A port free now whose next one is free too (the service's and the backend's)."""
    while True:
        port = free_port()
        if port < 65535 and not listening(port + 1) and bindable(port + 1):
            return port


def bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def environment(tmp_path: Path, **settings: str) -> dict[str, str]:
    """The developer's environment without FRONTDESK_* (a database of the test's own)."""
    chosen = {
        name: value for name, value in os.environ.items() if not name.startswith("FRONTDESK_")
    }
    chosen["FRONTDESK_DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    chosen["PYTHONUNBUFFERED"] = "1"
    return chosen | settings


@pytest.fixture
def script_output(tmp_path: Path) -> Path:
    return tmp_path / "serve.log"


def start_script(tmp_path: Path, log: Path, *arguments: str) -> subprocess.Popen[bytes]:
    # A process group of its own, as a terminal gives the job it runs: Ctrl-C goes to it.
    with log.open("wb") as output:
        return subprocess.Popen(
            [str(SCRIPT), *arguments],
            env=environment(tmp_path),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_until_healthy(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_DEADLINE
    while True:
        assert process.poll() is None, log.read_text(errors="replace")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.05)


def process_group(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])


def serve_under(script: int) -> int:
    """The `frontdesk serve` process the script started: by now its stop guard
    (http_server.serve_http), the parent of Granian's supervisor."""
    children = Path(f"/proc/{script}/task/{script}/children").read_text().split()
    [serve] = [
        int(pid)
        for pid in children
        if b"frontdesk.server.stop_guard" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    ]
    return serve


def test_the_port_moves_the_backend_and_the_urls_and_ctrl_c_stops_all(
    tmp_path: Path, script_output: Path
) -> None:
    port = two_free_ports()
    script = start_script(tmp_path, script_output, "--port", str(port))
    try:
        wait_until_healthy(script, port, script_output)
        mcp_url = f"http://127.0.0.1:{port}/v1/demo/mcp"
        metadata = httpx.get(
            f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/v1/demo/mcp"
        ).json()
        assert metadata["resource"] == mcp_url
        printed = script_output.read_text()
        assert f"demo backend listening on http://127.0.0.1:{port + 1}/tools" in printed
        # The example takes the URL it is given, and the demo company calls the backend
        # where it listens.
        guest = subprocess.run(
            [sys.executable, "examples/guest_call.py", mcp_url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=START_DEADLINE,
            check=False,
        )
        assert guest.returncode == 0, guest.stderr
        assert "Brazil Cerrado" in guest.stdout
        shown = subprocess.run(
            [str(Path(sys.executable).with_name("frontdesk")), "companies", "show", "demo"],
            env=environment(tmp_path),
            capture_output=True,
            check=True,
            timeout=START_DEADLINE,
        )
        tools = orjson.loads(shown.stdout)["tools"]
        assert {
            tool["provider"]["url"] for tool in tools if tool["provider"]["type"] == "http"
        } == {f"http://127.0.0.1:{port + 1}/tools"}
        assert listening(port + 1)

        # Ctrl-C, pressed twice, reaches the script's process group; the service is in a
        # session of its own, so it hears only the script's one SIGTERM.
        serve = serve_under(script.pid)
        assert process_group(serve) != script.pid
        began = time.monotonic()
        os.killpg(script.pid, signal.SIGINT)
        os.killpg(script.pid, signal.SIGINT)
        assert script.wait(timeout=STOP_WITHIN + SLACK) == 0, script_output.read_text()
        assert time.monotonic() - began < STOP_WITHIN
        assert not listening(port)
        assert not listening(port + 1)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait()


def test_a_taken_backend_port_stops_the_script_in_one_line(
    tmp_path: Path, script_output: Path
) -> None:
    """Whatever holds the backend's port is not called: the script says so in one line and
    exits before the service starts (no database is even created)."""
    port = two_free_ports()
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", port + 1))
        stranger.listen()
        script = start_script(tmp_path, script_output, "--port", str(port))
        status = script.wait(timeout=START_DEADLINE)
        assert not listening(port)
    printed = script_output.read_text()
    assert status == 1
    assert printed.splitlines() == [
        f"cannot listen on 127.0.0.1:{port + 1}: Address already in use"
        " (set FRONTDESK_DEMO_BACKEND_PORT)"
    ]
    assert not (tmp_path / "frontdesk.db").exists()
