"""The ``frontdesk`` command. It only parses arguments and forwards to typed functions."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import click
import orjson

from frontdesk.cli import admin as cli_admin
from frontdesk.cli import keys as cli_keys
from frontdesk.cli import operations
from frontdesk.cli import signing as cli_signing
from frontdesk.cli import tools as cli_tools
from frontdesk.cli.common import local_base_url
from frontdesk.cli.common import run as _run
from frontdesk.cli.common import settings as _settings
from frontdesk.cli.usage import usage as usage_command
from frontdesk.errors import CannotListen, DatabaseNotReady
from frontdesk.store.companies import ApplyOutcome
from frontdesk.store.purging import purge_now


@click.group()
def main() -> None:
    """Frontdesk: each company's assistant on MCP, with customer sign-in."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="IP address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(host: str, port: int, workers: int) -> None:
    """Run the service. Without FRONTDESK_BASE_URL it advertises http://HOST:PORT."""
    settings = _settings()
    if "base_url" not in settings.model_fields_set and port != 0:
        # The URLs the service writes (metadata, redirects) must reach this very listener.
        settings = _settings(base_url=local_base_url(host, port))
    try:
        operations.serve(settings, host=host, port=port, workers=workers)
    except (DatabaseNotReady, CannotListen) as error:
        raise click.ClickException(str(error)) from None


@main.group()
def companies() -> None:
    """Manage companies with a declarative file."""


@companies.command("apply")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
def companies_apply(file: Path, dry_run: bool) -> None:
    """Create or update every company in FILE (YAML or JSON); the same file twice is a no-op.
    Companies the file leaves out are left as they are."""
    settings = _settings()
    if dry_run:
        plan = _run(lambda: operations.plan_companies_file(settings, file, warn=_warn))
        for tenant_key, change in plan.items():
            click.echo(f"{tenant_key}: {_planned(change)}")
        click.echo("dry run: nothing was written")
        return
    outcomes = _run(lambda: operations.apply_companies_file(settings, file, warn=_warn))
    for tenant_key, outcome in outcomes.items():
        click.echo(f"{tenant_key}: {outcome.value}")


def _warn(text: str) -> None:
    click.echo(f"warning: {text}", err=True)


def _planned(change: operations.PlannedChange) -> str:
    if change.outcome is ApplyOutcome.UNCHANGED:
        return "unchanged"
    if change.fields:
        return f"would be {change.outcome.value} ({', '.join(change.fields)})"
    return f"would be {change.outcome.value}"


@companies.command("list")
def companies_list() -> None:
    """List every company with its region, state and MCP URL (from FRONTDESK_BASE_URL)."""
    settings = _settings()
    rows = _run(lambda: operations.list_companies(settings))
    if "base_url" not in settings.model_fields_set:
        # `serve --port` advertises its own port without the setting; this command cannot
        # know it, so it says which address its URLs assume.
        _warn(
            f"URLs on the default {settings.base_url}: set FRONTDESK_BASE_URL to the address"
            " the service advertises (e.g. http://127.0.0.1:9000 after serve --port 9000)"
        )
    for row in rows:
        click.echo(
            f"{row.tenant_key}\t{row.region}\t{'active' if row.active else 'inactive'}"
            f"\t{row.name}\t{row.mcp_url}"
        )


@companies.command("show")
@click.argument("tenant_key")
def companies_show(tenant_key: str) -> None:
    """Print one company's definition as JSON, its secrets redacted."""
    settings = _settings()
    definition = _run(lambda: operations.show_company(settings, tenant_key))
    sys.stdout.write(orjson.dumps(definition, option=orjson.OPT_INDENT_2).decode() + "\n")


@main.group()
def audit() -> None:
    """Security events per company."""


@audit.command("list")
@click.argument("tenant_key")
@click.option("--since", type=click.DateTime(), help="Only events at or after this UTC time.")
@click.option("--event", "events", multiple=True, help="Only these events (repeatable).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--customer", help="Only events of this customer's grants (subject or email).")
def audit_list(
    tenant_key: str,
    since: datetime | None,
    events: tuple[str, ...],
    limit: int,
    customer: str | None,
) -> None:
    """Print the company's security events as JSON lines, newest first."""
    settings = _settings()
    moment = since.replace(tzinfo=UTC) if since is not None else None
    found = _run(
        lambda: operations.audit_events(
            settings, tenant_key, moment, list(events), limit, customer=customer
        )
    )
    for event in found:
        sys.stdout.write(orjson.dumps(event.to_json()).decode() + "\n")


companies.add_command(cli_admin.companies_deactivate)
companies.add_command(cli_admin.companies_activate)
companies.add_command(cli_admin.companies_delete)
main.add_command(cli_admin.clients)
main.add_command(cli_admin.grants)
main.add_command(usage_command)
main.add_command(cli_tools.tools)
main.add_command(cli_keys.keys)
cli_keys.keys.add_command(cli_signing.rotate_signing)


@main.group()
def db() -> None:
    """Database maintenance."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply every pending migration (creating a missing SQLite file); say what was done."""
    settings = _settings()
    click.echo(_run(lambda: operations.upgrade_database(settings)).summary())


@main.command()
@click.option("--dry-run", is_flag=True, help="Count what would be deleted; delete nothing.")
def purge(dry_run: bool) -> None:
    """Delete now what is past its retention (expired codes and tokens, ended families,
    spent sign-in flows, never-used clients, old audit events); print the count per kind."""
    settings = _settings()
    report = _run(lambda: purge_now(settings, dry_run=dry_run))
    for kind, deleted in report.counts.items():
        click.echo(f"{kind}: {deleted}")
    if dry_run:
        click.echo("dry run: nothing was deleted")
