"""``frontdesk tools``: a company's tools from its own API's OpenAPI document, and their
version history."""

from __future__ import annotations

import click

from frontdesk.cli.common import run, settings
from frontdesk.companies.provider_definitions import checked_base_url
from frontdesk.store.tool_versions import HistoryEntry


def _base_url(_: click.Context, __: click.Parameter, value: str) -> str:
    try:
        return checked_base_url(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@click.group()
def tools() -> None:
    """A company's tools."""


@tools.command("import-openapi")
@click.argument("tenant_key")
@click.argument("document", metavar="FILE|URL")
@click.option(
    "--base-url",
    required=True,
    callback=_base_url,
    help="Where the API is served; each call goes to this URL plus the operation's path.",
)
@click.option(
    "--include",
    multiple=True,
    metavar="OPID_OR_TAG",
    help="Import only the operations with this operationId or tag (repeatable).",
)
@click.option("--source", help="Name the import (default: the document's info.title).")
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
def import_openapi(
    tenant_key: str,
    document: str,
    base_url: str,
    include: tuple[str, ...],
    source: str | None,
    dry_run: bool,
) -> None:
    """Make each operation of an OpenAPI 3.0 or 3.1 document (a FILE in JSON or YAML, or an
    https URL) a tool of the company, and print the diff. Importing again with the same
    source replaces that import's tools, and only those."""
    # Imported here: the validator and its schemas load only for this command.
    from frontdesk.openapi_import.command import import_from

    config = settings()
    plan = run(
        lambda: import_from(
            config,
            tenant_key,
            document,
            base_url=base_url,
            include=include,
            source=source,
            dry_run=dry_run,
        )
    )
    for sign, names in (("+", plan.added), ("~", plan.changed), ("-", plan.removed)):
        for name in names:
            click.echo(f"{sign} {name}")
    click.echo(
        f"{tenant_key}: {len(plan.added)} added, {len(plan.changed)} changed,"
        f" {len(plan.removed)} removed, {len(plan.unchanged)} unchanged"
        f" (import {plan.source!r})"
    )
    if dry_run:
        click.echo("dry run: nothing was written")


@tools.command("history")
@click.argument("tenant_key")
@click.argument("tool", required=False)
def history(tenant_key: str, tool: str | None) -> None:
    """Print the version history of the company's tools (or one TOOL), oldest first: each
    version as first served or consented to, and its definition hash. A version that
    changes what a tool may do asks customers' existing grants again."""
    from frontdesk.administration.command_database import opened
    from frontdesk.administration.tool_history import tool_history

    config = settings()

    async def read() -> list[HistoryEntry]:
        async with opened(config) as database:
            return await tool_history(database.engine, tenant_key, tool)

    entries = run(read)
    if not entries:
        click.echo(f"{tenant_key}: no tool version recorded yet")
        return
    click.echo("tool\tversion\tdefinition hash\tfirst seen at")
    for entry in entries:
        seen = entry.first_seen_at.isoformat(timespec="seconds").replace("+00:00", "Z")
        click.echo(f"{entry.tool}\t{entry.version}\t{entry.definition_hash}\t{seen}")
