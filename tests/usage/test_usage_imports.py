"""A SQLite worker that counts and flushes tool calls loads no PostgreSQL dialect: the
flush picks its dialect's INSERT where it runs (store.tool_usage). Checked in a fresh
interpreter, since this test process has long imported everything."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import anyio

from frontdesk.cli.operations import prepare_database
from frontdesk.config import Settings
from tests.conftest import ROOT

WORKER = """
import asyncio, json, sys
from frontdesk.app import create_app
from frontdesk.config import Settings
from datetime import UTC, datetime, timedelta
from frontdesk.usage import counters
from frontdesk.usage.report import read_usage

settings = Settings.model_validate_json(sys.argv[1])

async def count_and_flush():
    app = create_app(settings)
    await app.services.start()
    try:
        app.services.usage.counters.record("demo", "echo", counters.OK, None, 0.002)
        assert await app.services.usage.flush()
        now = datetime.now(UTC)
        report = await read_usage(
            app.services.database, "demo", now - timedelta(hours=1), now + timedelta(hours=1)
        )
        assert report["totals"]["calls"] == 1, report
    finally:
        await app.services.stop()

asyncio.run(count_and_flush())
print(json.dumps([name for name in ("sqlalchemy.dialects.postgresql", "asyncpg")
                  if name in sys.modules]))
"""


def test_a_sqlite_worker_flushes_without_the_postgresql_dialect(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(seed_demo=True)
    anyio.run(prepare_database, settings)
    worker = settings.model_copy(update={"auto_migrate": False, "log_level": "CRITICAL"})
    result = subprocess.run(
        [sys.executable, "-c", WORKER, worker.model_dump_json()],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == []
