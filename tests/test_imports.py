"""A serving worker loads only what serving needs: every module costs memory in each worker.

Checked in a fresh interpreter, since this test process has long imported all of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import anyio

from frontdesk.cli.operations import prepare_database
from frontdesk.companies.files import apply_companies, parse_companies
from frontdesk.config import Settings
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database

# Migrations (`frontdesk serve` runs them before serving), the HTML pages' templates (loaded
# on the first page), the companies file's YAML and its schema checks (`companies apply`),
# and SQLAlchemy's PostgreSQL dialect and asyncpg on SQLite. (SQLAlchemy's ORM is loaded: its
# asyncio extension, which the store uses, imports it.)
NOT_NEEDED_TO_SERVE = (
    "alembic",
    "mako",
    "jinja2",
    "jsonschema",
    "yaml",
    "sqlalchemy.dialects.postgresql",
    "asyncpg",
)

WORKER = """
import asyncio, json, sys
from frontdesk.app import create_app
from frontdesk.config import Settings

settings = Settings.model_validate_json(sys.argv[1])

async def serve_a_stored_company(tenant_key):
    app = create_app(settings)
    await app.services.start()
    try:
        assert await app.services.registry.active(tenant_key) is not None
    finally:
        await app.services.stop()

asyncio.run(serve_a_stored_company(sys.argv[2]))
print(json.dumps([name for name in sys.argv[3:] if name in sys.modules]))
"""

# A company whose tools all run in-process and whose customers sign in with the dev login:
# nothing to call over HTTP.
IN_PROCESS_ONLY = {
    "tenant_key": "inhouse",
    "name": "In-house",
    "tools": [
        {
            "name": "echo",
            "description": "Repeats the text it is given.",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "provider": {"type": "python", "target": "frontdesk.demo.tools:echo"},
            "annotations": {
                "title": "Echo",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }
    ],
    "signin": {"login": {"type": "dev"}},
}


def loaded_by_a_worker(settings: Settings, tenant_key: str, *modules: str) -> list[str]:
    """Which of ``modules`` a fresh worker has loaded once it serves ``tenant_key``."""
    worker = settings.model_copy(
        update={"auto_migrate": False, "seed_demo": False, "log_level": "CRITICAL"}
    )
    result = subprocess.run(
        [sys.executable, "-c", WORKER, worker.model_dump_json(), tenant_key, *modules],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def test_a_worker_serving_a_stored_company_loads_nothing_it_does_not_need(
    make_settings: Callable[..., Settings],
) -> None:
    """Build the app, start it and load a company from the store, as a worker does."""
    settings = make_settings(seed_demo=True)
    anyio.run(prepare_database, settings)
    assert loaded_by_a_worker(settings, "demo", *NOT_NEEDED_TO_SERVE) == []


def test_a_worker_whose_companies_call_nothing_over_http_loads_no_http_client(
    make_settings: Callable[..., Settings],
) -> None:
    """httpx and its TLS context come with the first HTTP tool or OpenID Connect login,
    Authlib with the first OpenID Connect sign-in, and cryptography with the first company
    secret opened (secret_box)."""
    settings = make_settings(seed_demo=False)

    async def store_the_company() -> None:
        await prepare_database(settings)
        database = Database(settings.database_url)
        try:
            document = parse_companies({"companies": [IN_PROCESS_ONLY]})
            await apply_companies(CompanyRepository(database.engine), document)
        finally:
            await database.close()

    anyio.run(store_the_company)
    assert loaded_by_a_worker(settings, "inhouse", "httpx", "authlib", "cryptography") == []
