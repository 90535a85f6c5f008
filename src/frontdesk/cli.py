"""The ``frontdesk`` command. It only parses arguments and forwards to typed functions."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import click
import orjson
from pydantic import ValidationError

from frontdesk import operations
from frontdesk.config import Settings
from frontdesk.errors import CannotListen, ConfigurationError, DatabaseNotReady

T = TypeVar("T")


def _settings() -> Settings:
    try:
        return Settings()
    except (ValidationError, ConfigurationError) as error:
        raise click.ClickException(f"invalid settings: {error}") from None


def _run(work: Callable[[], Awaitable[T]]) -> T:
    try:
        return asyncio.run(work())  # type: ignore[arg-type]
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None


@click.group()
def main() -> None:
    """Frontdesk: each company's assistant on MCP, with customer sign-in."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="IP address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(host: str, port: int, workers: int) -> None:
    """Run the service."""
    try:
        operations.serve(_settings(), host=host, port=port, workers=workers)
    except (DatabaseNotReady, CannotListen) as error:
        raise click.ClickException(str(error)) from None


@main.group()
def companies() -> None:
    """Manage companies with a declarative file."""


@companies.command("apply")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def companies_apply(file: Path) -> None:
    """Create or update every company in FILE (YAML or JSON); the same file twice is a no-op."""
    settings = _settings()
    outcomes = _run(lambda: operations.apply_companies_file(settings, file))
    for tenant_key, outcome in outcomes.items():
        click.echo(f"{tenant_key}: {outcome.value}")


@companies.command("list")
def companies_list() -> None:
    """List every company with its region, state and MCP URL."""
    settings = _settings()
    for row in _run(lambda: operations.list_companies(settings)):
        click.echo(
            f"{row.tenant_key}\t{row.region}\t{'active' if row.active else 'inactive'}"
            f"\t{row.name}\t{row.mcp_url}"
        )


@companies.command("show")
@click.argument("tenant_key")
def companies_show(tenant_key: str) -> None:
    """Print one company's definition as JSON."""
    settings = _settings()
    definition = _run(lambda: operations.show_company(settings, tenant_key))
    if definition is None:
        raise click.ClickException(f"no company has the tenant key {tenant_key!r}")
    sys.stdout.write(orjson.dumps(definition, option=orjson.OPT_INDENT_2).decode() + "\n")


@main.group()
def audit() -> None:
    """Security events per company."""


@audit.command("list")
@click.argument("tenant_key")
@click.option("--since", type=click.DateTime(), help="Only events at or after this UTC time.")
@click.option("--event", "events", multiple=True, help="Only these events (repeatable).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10_000))
def audit_list(
    tenant_key: str, since: datetime | None, events: tuple[str, ...], limit: int
) -> None:
    """Print the company's security events as JSON lines, newest first."""
    settings = _settings()
    moment = since.replace(tzinfo=UTC) if since is not None else None
    found = _run(lambda: operations.audit_events(settings, tenant_key, moment, list(events), limit))
    for event in found:
        sys.stdout.write(orjson.dumps(event.to_json()).decode() + "\n")


@main.group()
def db() -> None:
    """Database maintenance."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply every pending migration."""
    settings = _settings()
    _run(lambda: operations.upgrade_database(settings))
    click.echo("database is up to date")
