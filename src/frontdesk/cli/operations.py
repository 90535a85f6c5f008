"""What the command line does, as typed functions the CLI forwards to (and tests call)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from frontdesk.administration.command_database import (
    DatabaseMissing,
    DatabaseUnreachable,
    Upgraded,
    Use,
    opened,
    reaching,
)
from frontdesk.administration.company_state import UnknownCompany, UnknownTarget
from frontdesk.companies.definition import CompaniesFile
from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.companies.production import production_problems
from frontdesk.companies.seed import seed_demo_company
from frontdesk.config import Settings, retired_settings_in_environment
from frontdesk.errors import ConfigurationError, DatabaseNotReady
from frontdesk.observability.logs import configure_logging
from frontdesk.sealing.company_secrets import (
    SecretsUnreadable,
    open_secrets,
    redact_secrets,
    unset_variables,
)
from frontdesk.sealing.secret_box import SecretBox
from frontdesk.server.http_server import check_address, serve_http
from frontdesk.store.admin import Administration
from frontdesk.store.audit import AuditEvent, AuditLog
from frontdesk.store.companies import ApplyOutcome, CompanyRepository
from frontdesk.store.database import Database

log = structlog.get_logger(__name__)


def serve(settings: Settings, *, host: str, port: int, workers: int) -> None:
    # Every line serve writes is a log line in the configured form (JSON unless
    # FRONTDESK_LOG_JSON=false, README "Logs"): its own start-up lines too, and Granian's
    # (http_server.py).
    configure_logging(settings.log_level, settings.log_json)
    # A taken address fails before the database is touched.
    check_address(host, port)
    # Migrations and the demo seed run once, here, before any worker starts: workers that
    # each did it at once would race on the schema and on the seed's insert. They run in a
    # child process because this one supervises the workers for as long as they serve, and
    # would otherwise keep Alembic and Mako loaded all that time, in every worker too (they
    # are forked from it; docs/decisions/memory.md).
    if settings.auto_migrate or settings.should_seed_demo:
        _prepare_database_in_child(settings)
    # The workers read their settings from the environment; the base URL may be one the
    # command derived from --host and --port (cli.serve), which they must advertise too.
    os.environ["FRONTDESK_BASE_URL"] = settings.base_url
    os.environ["FRONTDESK_AUTO_MIGRATE"] = "false"
    os.environ["FRONTDESK_SEED_DEMO"] = "false"
    # Said once the address and the database are known good: a start that fails says only
    # why, in one line (cli_common).
    _announce(
        settings,
        f"Frontdesk ({settings.env.value}, region {settings.region.value})",
        "starting",
        env=settings.env.value,
        region=settings.region.value,
    )
    for warning in settings.production_warnings:
        _announce(settings, f"warning: {warning}", "production_warning", warning=warning)
    for warning in retired_settings_in_environment():
        _announce(settings, f"warning: {warning}", "retired_setting_warning", warning=warning)
    if settings.should_seed_demo:
        demo = settings.mcp_url("demo")
        _announce(settings, f"Demo company's MCP endpoint: {demo}", "demo_endpoint", url=demo)
    serve_http(settings, host=host, port=port, workers=workers)


def _announce(settings: Settings, text: str, event: str, **fields: str) -> None:
    """One start-up line: a JSON log line (``event`` and ``fields``) when the logs are
    JSON, else ``text`` as a person reads it, a warning on stderr and the rest on stdout."""
    if settings.log_json:
        if event.endswith("warning"):
            log.warning(event, **fields)
        else:
            log.info(event, **fields)
        return
    print(text, file=sys.stderr if event.endswith("warning") else sys.stdout, flush=True)


def _prepare_database_in_child(settings: Settings) -> None:
    # A plain child interpreter, not multiprocessing: spawning would leave multiprocessing's
    # resource tracker running beside the server (docs/decisions/memory.md). The settings go
    # as JSON on stdin, so the child uses these, not what its environment would give; -P
    # keeps the working directory off its sys.path, so nothing there can stand in for a
    # package.
    child = subprocess.run(
        [sys.executable, "-P", "-m", "frontdesk.cli.operations"],
        input=settings.model_dump_json().encode(),
        stderr=subprocess.PIPE,
        check=False,
    )
    said = child.stderr.decode(errors="replace").strip()
    if child.returncode == EXIT_TOLD:
        # An expected failure (an unreachable database), told in the child's one line.
        raise DatabaseNotReady(said)
    if said:
        print(said, file=sys.stderr, flush=True)
    if child.returncode != 0:
        raise DatabaseNotReady(
            f"the database could not be migrated or seeded (exit code {child.returncode});"
            " the reason is printed above"
        )


# The exit code of a child that failed as expected and said why in one line on stderr.
EXIT_TOLD = 3


async def prepare_database(settings: Settings) -> None:
    """Migrate (when FRONTDESK_AUTO_MIGRATE) and seed the demo company (when asked)."""
    database = Database(settings.database_url)
    try:
        if settings.auto_migrate:
            await reaching(settings.database_url, database.migrate())
        if settings.should_seed_demo:
            await reaching(
                settings.database_url,
                seed_demo_company(
                    company_repository(settings, database), settings.demo_backend_port
                ),
            )
    finally:
        await database.close()


def company_repository(settings: Settings, database: Database) -> CompanyRepository:
    """The companies, their secrets sealed under the operator's FRONTDESK_DATA_KEYS."""
    return CompanyRepository(database.engine, SecretBox(settings.data_keys))


async def upgrade_database(settings: Settings) -> Upgraded:
    """Create the database if it is a SQLite file not there yet, and migrate it; what was
    done."""
    done: list[Upgraded] = []
    async with opened(settings, Use.UPGRADE, report=done.append):
        pass
    return done[0]


async def apply_companies_file(
    settings: Settings, path: Path, warn: Callable[[str], None] | None = None
) -> dict[str, ApplyOutcome]:
    """Apply ``path``; ``warn`` is told each ``*_env`` variable this process lacks (applied
    all the same: the instances that serve may have it, but most often it is a typo), and
    that a new database is created, when the configured SQLite file is not there."""
    companies = _companies_to_apply(settings, path, warn)
    async with opened(settings, Use.SET_UP, notice=warn) as database:
        return await apply_companies(company_repository(settings, database), companies)


@dataclass(frozen=True, slots=True)
class PlannedChange:
    """What ``companies apply`` would do to one company: its outcome and, for an update,
    the top-level fields that differ (never their values: they may hold secrets)."""

    outcome: ApplyOutcome
    fields: tuple[str, ...] = ()


async def plan_companies_file(
    settings: Settings, path: Path, warn: Callable[[str], None] | None = None
) -> dict[str, PlannedChange]:
    """What applying ``path`` would change, per company, writing nothing (a dry run): the
    same checks as ``apply_companies_file``, and the same comparison as
    CompanyRepository.apply."""
    companies = _companies_to_apply(settings, path, warn)
    documents = [company.model_dump(mode="json", by_alias=True) for company in companies.companies]
    try:
        async with opened(settings) as database:
            repository = company_repository(settings, database)
            stored = {
                document["tenant_key"]: await repository.get(document["tenant_key"])
                for document in documents
            }
    except DatabaseMissing as missing:
        if warn is not None:
            warn(f"no database at {missing.path} yet: `companies apply` would create it")
        stored = {}
    box = SecretBox(settings.data_keys)
    plan: dict[str, PlannedChange] = {}
    for document in documents:
        key = document["tenant_key"]
        current = stored.get(key)
        if current is None:
            plan[key] = PlannedChange(ApplyOutcome.CREATED)
            continue
        try:
            opened_definition, stale = open_secrets(key, current.definition, box)
        except SecretsUnreadable:
            opened_definition, stale = {}, True
        fields = tuple(
            sorted(
                name
                for name in opened_definition.keys() | document.keys()
                if opened_definition.get(name) != document.get(name)
            )
        )
        if fields:
            plan[key] = PlannedChange(ApplyOutcome.UPDATED, fields)
        elif stale:
            plan[key] = PlannedChange(ApplyOutcome.RESEALED)
        else:
            plan[key] = PlannedChange(ApplyOutcome.UNCHANGED)
    return plan


def _companies_to_apply(
    settings: Settings, path: Path, warn: Callable[[str], None] | None
) -> CompaniesFile:
    companies = read_companies_file(path)
    if warn is not None:
        for company in companies.companies:
            document = company.model_dump(mode="json", by_alias=True)
            for warning in unset_variables(company.tenant_key, document):
                warn(warning)
    if settings.is_production:
        problems = [
            problem for company in companies.companies for problem in production_problems(company)
        ]
        if problems:
            # Nothing is applied: the file is all or nothing.
            raise ConfigurationError("not for production: " + "; ".join(problems))
    return companies


@dataclass(frozen=True, slots=True)
class CompanyRow:
    tenant_key: str
    name: str
    region: str
    active: bool
    mcp_url: str


async def list_companies(settings: Settings) -> list[CompanyRow]:
    async with opened(settings) as database:
        stored = await company_repository(settings, database).all()
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


async def show_company(settings: Settings, tenant_key: str) -> dict[str, Any]:
    """The company's definition as stored, every secret redacted (none is opened)."""
    async with opened(settings) as database:
        stored = await company_repository(settings, database).get(tenant_key)
    if stored is None:
        raise UnknownCompany(tenant_key)
    return redact_secrets(stored.definition)


async def audit_events(
    settings: Settings,
    tenant_key: str,
    since: datetime | None,
    events: list[str],
    limit: int,
    customer: str | None = None,
) -> list[AuditEvent]:
    """The company's events, newest first; only those about ``customer``'s grants when
    given. A deleted company's events stay readable until their retention ends."""
    async with opened(settings) as database:
        admin = Administration(database.engine)
        if not await admin.company_exists(tenant_key) and (
            customer is not None or not await admin.has_audit_events(tenant_key)
        ):
            raise UnknownCompany(tenant_key)
        if customer is not None and not await admin.customer_exists(tenant_key, customer):
            raise UnknownTarget(
                f"company {tenant_key!r} has no customer whose subject or email is {customer!r}"
            )
        families = None if customer is None else admin.families_of_customer(tenant_key, customer)
        return await AuditLog(database.engine).list(
            tenant_key, since=since, events=events or None, limit=limit, families=families
        )


if __name__ == "__main__":
    # The child process of serve: prepare the database for the settings on stdin. Its log
    # lines (the demo seeded) go to stderr, which serve passes on, in the configured form.
    given = Settings.model_validate_json(sys.stdin.buffer.read())
    configure_logging(given.log_level, given.log_json)
    try:
        asyncio.run(prepare_database(given))
    except DatabaseUnreachable as error:
        print(error, file=sys.stderr)
        sys.exit(EXIT_TOLD)
