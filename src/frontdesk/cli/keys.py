"""The ``frontdesk keys`` commands: the admin API's keys. An operator key manages every
company, a company key its own only (README "For companies: the admin API").

Other modules add their own commands to this group (``keys.add_command``); it is importable
as ``frontdesk.cli.keys.keys``."""

from __future__ import annotations

from datetime import datetime

import click

from frontdesk.administration import keys as key_administration
from frontdesk.cli.common import run, settings


@click.group()
def keys() -> None:
    """Keys for the admin API (/admin/v1): only their hashes are kept."""


@keys.command("create")
@click.option("--operator", is_flag=True, help="A key that manages every company.")
@click.option("--company", "tenant_key", metavar="KEY", help="A key that manages this company.")
@click.option("--name", help="What the key is for, shown by `keys list`.")
def keys_create(operator: bool, tenant_key: str | None, name: str | None) -> None:
    """Make a key and print it on the last line, once: only its hash is kept, so it cannot
    be shown again. Name exactly one of --operator and --company KEY."""
    if operator == (tenant_key is not None):
        raise click.UsageError("name exactly one of --operator and --company KEY")
    if name is not None and not 1 <= len(name) <= 100:
        raise click.BadParameter("must be 1 to 100 characters", param_hint="--name")
    config = settings()
    made = run(lambda: key_administration.create_key(config, tenant_key, name))
    whose = "every company" if tenant_key is None else f"company {tenant_key}"
    click.echo(f"key {made.key.key_id} created; it manages {whose}")
    click.echo("it is shown this once; keep it secret (only its hash is stored):", err=True)
    click.echo(made.secret)


@keys.command("list")
def keys_list() -> None:
    """Print every key, one tab-separated line each: key id, kind, company, name, created,
    last used, revoked. Never the key itself: it is not kept."""
    config = settings()
    for key in run(lambda: key_administration.list_keys(config)):
        click.echo(
            f"{key.key_id}\t{key.kind.value}\t{key.tenant_key or '-'}\t{key.name or '-'}"
            f"\t{_when(key.created_at)}\t{_when(key.last_used_at)}\t{_when(key.revoked_at)}"
        )


@keys.command("revoke")
@click.argument("key_id")
def keys_revoke(key_id: str) -> None:
    """Revoke a key by its id (from `keys list`): the admin API refuses it (401) from its
    next request on."""
    config = settings()
    revoked = run(lambda: key_administration.revoke_key(config, key_id))
    click.echo(f"{key_id}: {'revoked' if revoked else 'already revoked'}")


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.isoformat(timespec="seconds")
