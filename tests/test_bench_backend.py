"""The bench's backend scenarios' parts, run for real for a moment: the JSON backend, the
bare pass-through that is their ceiling and the bare RSGI ceiling on Granian, each
answering the request the bench sends with the reply its check accepts. A smoke run, not
a timing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from benchkit.messages import check_reply, mcp_request
from benchkit.processes import free_port
from benchkit.systems import SCENARIOS
from tests.support.waiting import wait_until

BENCH = Path(__file__).resolve().parent.parent / "bench"
START_DEADLINE = 30.0
SCENARIO = {scenario.key: scenario for scenario in SCENARIOS}


@contextmanager
def serving(module: str, interface: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``module``'s ``app`` on a free loopback port, by uvicorn (asgi) or Granian (rsgi)."""
    port = free_port()
    if interface == "asgi":
        command = [sys.executable, "-m", "uvicorn", f"{module}:app", "--port", str(port)]
        command += ["--log-level", "warning"]
    else:
        command = [sys.executable, "-m", "granian", "--interface", "rsgi", "--port", str(port)]
        command += ["--no-ws", "--log-level", "warning", f"{module}:app"]
    process = subprocess.Popen(
        command, cwd=BENCH, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers(url), START_DEADLINE, f"{module} listening")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=START_DEADLINE)


def answers(url: str) -> bool:
    try:
        httpx.get(url + "/", timeout=1.0)
    except httpx.TransportError:
        return False
    return True


def test_the_backend_answers_its_operation_and_describes_it() -> None:
    with serving("baselines.json_backend", "asgi") as backend:
        assert httpx.get(backend + "/echo", params={"text": "hello"}).json() == {"text": "hello"}
        call = {"tenant": "benchapi", "tool": "echo_http", "arguments": {"text": "hello"}}
        assert httpx.post(backend + "/http-tool", json=call).json() == {"text": "hello"}
        document = httpx.get(backend + "/openapi.json").json()
        assert document["paths"]["/echo"]["get"]["operationId"] == "echo"


def test_the_pass_through_answers_from_the_backend() -> None:
    scenario = SCENARIO["api-pass-through"]
    with (
        serving("baselines.json_backend", "asgi") as backend,
        serving("baselines.pass_through", "asgi", {"BENCH_BACKEND_URL": backend}) as server,
        httpx.Client(timeout=10.0) as client,
    ):
        check_reply(scenario, mcp_request(scenario, "/mcp", None).send(client, server))


def test_the_bare_rsgi_ceiling_answers_the_call() -> None:
    scenario = SCENARIO["ceiling-rsgi"]
    with serving("baselines.bare_rsgi", "rsgi") as server, httpx.Client(timeout=10.0) as client:
        check_reply(scenario, mcp_request(scenario, "/mcp", None).send(client, server))
