"""What the command line does, as typed functions the CLI forwards to (and tests call)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.companies.production import production_problems
from frontdesk.companies.seed import seed_demo_company
from frontdesk.config import Settings
from frontdesk.errors import ConfigurationError, DatabaseNotReady
from frontdesk.http_server import check_address, serve_http
from frontdesk.store.audit import AuditEvent, AuditLog
from frontdesk.store.companies import ApplyOutcome, CompanyRepository
from frontdesk.store.database import Database


def serve(settings: Settings, *, host: str, port: int, workers: int) -> None:
    print(f"Frontdesk ({settings.env.value}, region {settings.region.value})", flush=True)
    for warning in settings.production_warnings:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    # A taken address fails before the database is touched.
    check_address(host, port)
    # Migrations and the demo seed run once, here, before any worker starts: workers that
    # each did it at once would race on the schema and on the seed's insert. They run in a
    # child process because this one supervises the workers for as long as they serve, and
    # would otherwise keep Alembic and Mako loaded (~10 MB) all that time, in every worker
    # too (they are forked from it).
    if settings.auto_migrate or settings.should_seed_demo:
        _prepare_database_in_child(settings)
    os.environ["FRONTDESK_AUTO_MIGRATE"] = "false"
    os.environ["FRONTDESK_SEED_DEMO"] = "false"
    if settings.should_seed_demo:
        print(f"Demo company's MCP endpoint: {settings.mcp_url('demo')}", flush=True)
    serve_http(settings, host=host, port=port, workers=workers)


def _prepare_database_in_child(settings: Settings) -> None:
    # A plain child interpreter, not multiprocessing: spawning would leave multiprocessing's
    # resource tracker running beside the server (~6 MB more). The settings go as JSON on
    # stdin, so the child uses these, not what its environment would give; -P keeps the
    # working directory off its sys.path, so nothing there can stand in for a package.
    child = subprocess.run(
        [sys.executable, "-P", "-m", "frontdesk.operations"],
        input=settings.model_dump_json().encode(),
        check=False,
    )
    if child.returncode != 0:
        raise DatabaseNotReady(
            f"the database could not be migrated or seeded (exit code {child.returncode});"
            " the reason is printed above"
        )


async def prepare_database(settings: Settings) -> None:
    """Migrate (when FRONTDESK_AUTO_MIGRATE) and seed the demo company (when asked)."""
    database = Database(settings.database_url)
    try:
        if settings.auto_migrate:
            await database.migrate()
        if settings.should_seed_demo:
            await seed_demo_company(CompanyRepository(database.engine))
    finally:
        await database.close()


async def _with_database(settings: Settings) -> Database:
    database = Database(settings.database_url)
    if settings.auto_migrate:
        await database.migrate()
    return database


async def upgrade_database(settings: Settings) -> None:
    database = Database(settings.database_url)
    try:
        await database.migrate()
    finally:
        await database.close()


async def apply_companies_file(settings: Settings, path: Path) -> dict[str, ApplyOutcome]:
    companies = read_companies_file(path)
    if settings.is_production:
        problems = [
            problem for company in companies.companies for problem in production_problems(company)
        ]
        if problems:
            # Nothing is applied: the file is all or nothing.
            raise ConfigurationError("not for production: " + "; ".join(problems))
    database = await _with_database(settings)
    try:
        return await apply_companies(CompanyRepository(database.engine), companies)
    finally:
        await database.close()


@dataclass(frozen=True, slots=True)
class CompanyRow:
    tenant_key: str
    name: str
    region: str
    active: bool
    mcp_url: str


async def list_companies(settings: Settings) -> list[CompanyRow]:
    database = await _with_database(settings)
    try:
        stored = await CompanyRepository(database.engine).all()
    finally:
        await database.close()
    return [
        CompanyRow(
            tenant_key=row.tenant_key,
            name=row.definition["name"],
            region=row.definition["region"],
            active=row.definition["active"],
            mcp_url=settings.mcp_url(row.tenant_key),
        )
        for row in stored
    ]


async def show_company(settings: Settings, tenant_key: str) -> dict[str, Any] | None:
    database = await _with_database(settings)
    try:
        stored = await CompanyRepository(database.engine).get(tenant_key)
    finally:
        await database.close()
    return None if stored is None else stored.definition


async def audit_events(
    settings: Settings,
    tenant_key: str,
    since: datetime | None,
    events: list[str],
    limit: int,
) -> list[AuditEvent]:
    database = await _with_database(settings)
    try:
        return await AuditLog(database.engine).list(
            tenant_key, since=since, events=events or None, limit=limit
        )
    finally:
        await database.close()


if __name__ == "__main__":
    # The child process of serve: prepare the database for the settings on stdin.
    asyncio.run(prepare_database(Settings.model_validate_json(sys.stdin.buffer.read())))
