"""A serving worker loads only what serving needs: every module costs memory in each worker.

Checked in a fresh interpreter, since this test process has long imported all of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import anyio

from frontdesk.config import Settings
from frontdesk.operations import prepare_database

# Migrations (`frontdesk serve` runs them before serving), the HTML pages' templates (loaded
# on the first page), the companies file's YAML and its schema checks (`companies apply`),
# and SQLAlchemy's PostgreSQL dialect on SQLite.
NOT_NEEDED_TO_SERVE = (
    "alembic",
    "mako",
    "jinja2",
    "jsonschema",
    "yaml",
    "sqlalchemy.dialects.postgresql",
)

WORKER = """
import asyncio, json, sys
from frontdesk.app import create_app
from frontdesk.config import Settings

settings = Settings.model_validate_json(sys.argv[1])

async def serve_the_demo_company():
    app = create_app(settings)
    await app.services.start()
    try:
        assert await app.services.registry.active("demo") is not None
    finally:
        await app.services.stop()

asyncio.run(serve_the_demo_company())
print(json.dumps([name for name in sys.argv[2:] if name in sys.modules]))
"""


def test_a_worker_serving_a_stored_company_loads_nothing_it_does_not_need(
    make_settings: Callable[..., Settings],
) -> None:
    """Build the app, start it and load a company from the store, as a worker does."""
    anyio.run(prepare_database, make_settings(seed_demo=True))
    worker = make_settings(auto_migrate=False, seed_demo=False, log_level="CRITICAL")

    result = subprocess.run(
        [sys.executable, "-c", WORKER, worker.model_dump_json(), *NOT_NEEDED_TO_SERVE],
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == []
