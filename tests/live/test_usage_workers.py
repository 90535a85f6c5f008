"""`frontdesk serve --workers 2` as a real process: each worker counts the tool calls it
answers and writes them as it stops (FRONTDESK_USAGE_FLUSH_SECONDS=0 leaves only that
flush), so after a SIGTERM `frontdesk usage` reads every call, whichever worker answered it
(the kernel spreads connections over both: tests/live/test_workers.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import orjson
import pytest

from tests.live.conftest import _frontdesk_command, service_environment, start_service

pytestmark = pytest.mark.live

CALLS = 24


def test_every_worker_writes_its_counts_as_it_stops(tmp_path: Path) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    running = start_service(
        "sqlite",
        database_url,
        tmp_path,
        workers=2,
        extra_env={"FRONTDESK_USAGE_FLUSH_SECONDS": "0"},
    )
    service = running.service
    try:
        for number in range(CALLS):
            # A connection each, so the kernel spreads them over both workers.
            with httpx.Client(timeout=10) as client:
                body = {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": str(number)}},
                }
                reply = client.post(service.mcp_url("acme"), json=body)
                assert reply.status_code == 200, reply.text
                assert reply.json()["result"]["isError"] is False
    finally:
        assert running.stop(), service.output()

    printed = subprocess.run(
        [*_frontdesk_command(), "usage", "acme"],
        env=service_environment(service.public_url, database_url),
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    report = orjson.loads(printed.stdout)
    [echo] = report["tools"]
    assert (echo["tool"], echo["calls"], echo["ok"]) == ("echo", CALLS, CALLS)
    assert echo["latency_ms"]["timed_calls"] == CALLS
