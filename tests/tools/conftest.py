"""Fixtures for the tool provider tests: scripted backends on loopback, the example backend as
a process of its own, and Frontdesk serving companies the test writes itself."""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import pytest

from tests.conftest import ROOT
from tests.support.serving import Serve as Serve
from tests.support.serving import Served as Served
from tests.tools.backends import DEADLINE, SECRET, Json, ScriptedBackend

EXAMPLE = ROOT / "examples" / "backend.py"
LOOPBACK = ["127.0.0.0/8"]


@pytest.fixture
def serve(serve: Serve) -> Serve:
    """Start Frontdesk on these companies only (and these settings overrides); loopback
    backends are allowed unless the test says otherwise (the suite's ``serve``,
    tests/conftest.py)."""

    async def start(*companies: Json, **overrides: Any) -> Served:
        overrides.setdefault("backend_allowed_networks", LOOPBACK)
        return await serve(*companies, **overrides)

    return start


@contextlib.contextmanager
def scripted_backend() -> Iterator[ScriptedBackend]:
    backend = ScriptedBackend()
    backend.start()
    try:
        yield backend
    finally:
        backend.stop()


@pytest.fixture
def backend() -> Iterator[ScriptedBackend]:
    """A scripted company backend on a free loopback port."""
    with scripted_backend() as started:
        yield started


@pytest.fixture
def other_backend() -> Iterator[ScriptedBackend]:
    """A second, independent backend (another company's)."""
    with scripted_backend() as started:
        yield started


@dataclass(frozen=True, slots=True)
class ExampleBackend:
    """examples/backend.py running as its own process."""

    url: str
    secret: str


def _first_line(stream: IO[str], timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return ""


@pytest.fixture(scope="module")
def example_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExampleBackend]:
    """The example backend, started the way an operator would, on a port it picks itself."""
    log_path = tmp_path_factory.mktemp("example-backend") / "stderr.log"
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("FRONTDESK_")
    }
    environment["FRONTDESK_DEMO_BACKEND_SECRET"] = SECRET
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "0"],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    try:
        assert process.stdout is not None
        line = _first_line(process.stdout, DEADLINE)
        assert line.startswith("listening on http://127.0.0.1:"), (
            f"examples/backend.py did not start: {line!r}\n{log_path.read_text()}"
        )
        yield ExampleBackend(line.removeprefix("listening on ").strip(), SECRET)
    finally:
        process.terminate()
        try:
            process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
