"""With JSON logs on (the default), everything `frontdesk serve` writes is a JSON line: its
own start-up lines, the database preparation's, the workers', and Granian's own (a worker
that died), as the README promises."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.live.conftest import START_DEADLINE, start_service
from tests.support.processes import parent_of

# What Granian's supervisor says when a worker exits without being asked to.
GRANIAN_WORKER_DIED = "Unexpected exit from worker-1"


def workers_under(ancestor: int) -> list[int]:
    """Granian's workers, however deep under ``ancestor``: the processes multiprocessing
    spawned (not its resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" not in command:
            continue
        pid = int(entry.name)
        parent = parent_of(pid)
        while parent not in (None, 0, 1):
            if parent == ancestor:
                found.append(pid)
                break
            parent = parent_of(parent)
    return found


def wait_for(condition: Any, what: str, deadline: float) -> Any:
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"no {what} within the deadline"
        time.sleep(0.05)


def healthy(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/healthz", timeout=1.0).status_code == 200
    except httpx.TransportError:
        return False


def test_every_line_serve_writes_is_json(tmp_path: Path) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    # A retired setting still set: serve warns of it, in JSON like every other line.
    retired = {"FRONTDESK_REFRESH_RETRY_SECONDS": "60"}
    running = start_service("sqlite", database_url, tmp_path, extra_env=retired)
    service = running.service
    try:
        deadline = time.monotonic() + START_DEADLINE
        [worker] = wait_for(lambda: workers_under(running.process.pid), "worker", deadline)
        # A worker killed outright: Granian's supervisor logs it and starts another.
        os.kill(worker, signal.SIGKILL)
        wait_for(lambda: GRANIAN_WORKER_DIED in service.output(), "Granian line", deadline)
        wait_for(lambda: healthy(service.base_url), "respawned worker", deadline)
        assert httpx.get(f"{service.base_url}/v1/nobody/oauth/authorize").status_code == 404
    finally:
        stopped = running.stop()
    assert stopped, service.output()

    lines = service.log_path.read_bytes().splitlines()
    entries = []
    for line in lines:
        try:
            entries.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise AssertionError(f"not a JSON line: {line!r}\n{service.output()}") from None
    events = {entry["event"] for entry in entries}
    # Serve's own lines, the preparation child's, a worker's and the access log.
    assert {"starting", "demo_endpoint", "demo_seeded", "serving_company", "request"} <= events
    [warned] = [entry for entry in entries if entry["event"] == "retired_setting_warning"]
    assert warned["warning"].startswith("FRONTDESK_REFRESH_RETRY_SECONDS is no longer read")
    [died] = [entry for entry in entries if entry["event"] == GRANIAN_WORKER_DIED]
    assert died["logger"] == "_granian"
    assert died["level"] == "error"
    assert died["timestamp"].endswith("Z")
