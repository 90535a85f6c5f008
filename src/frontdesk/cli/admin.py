"""The commands on a company's state and connections: ``companies deactivate``,
``activate`` and ``delete``, ``clients list`` and ``revoke``, ``grants list`` and
``revoke``. Each parses, forwards to administration.company_state, and says what happened to
the company's clients and tokens."""

from __future__ import annotations

from datetime import datetime

import click

from frontdesk.administration import company_state as administration
from frontdesk.cli.common import run, settings

KEPT = (
    "its clients, grants and tokens are kept, and work again when it is activated"
    " (`frontdesk companies activate {key}`, or applying a companies file in which it is"
    " active)"
)
REVOKED = (
    "their access tokens are refused (401) from the next call on every instance, and their"
    " refresh tokens too (invalid_grant); pending authorization codes were dropped"
)


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.isoformat(timespec="seconds")


@click.command("deactivate")
@click.argument("tenant_key")
def companies_deactivate(tenant_key: str) -> None:
    """Stop serving the company: its endpoints answer 404 (within
    FRONTDESK_COMPANY_CACHE_SECONDS on every instance). Its clients, grants and tokens are
    kept, and work again once it is activated."""
    config = settings()
    changed = run(lambda: administration.set_active(config, tenant_key, active=False))
    state = "deactivated" if changed else "already inactive"
    click.echo(f"{tenant_key}: {state}; its endpoints answer 404; " + KEPT.format(key=tenant_key))


@click.command("activate")
@click.argument("tenant_key")
def companies_activate(tenant_key: str) -> None:
    """Serve a deactivated company again, with the clients and grants it had."""
    config = settings()
    changed = run(lambda: administration.set_active(config, tenant_key, active=True))
    click.echo(f"{tenant_key}: {'activated' if changed else 'already active'}")


@click.command("delete")
@click.argument("tenant_key")
@click.option("--yes", is_flag=True, help="Confirm: the deletion cannot be undone.")
def companies_delete(tenant_key: str, yes: bool) -> None:
    """Delete the company with its registered clients, customers, pending codes and grants
    (token families and their tokens, revoked first so every instance refuses them at
    once). Its audit events stay until FRONTDESK_AUDIT_RETENTION_DAYS. Needs --yes."""
    config = settings()
    if not yes:
        raise click.UsageError(
            f"deleting {tenant_key} removes its clients, customers and grants for good, and"
            " ends every connection to it; run again with --yes"
        )
    deleted = run(lambda: administration.delete_company(config, tenant_key))
    click.echo(f"{tenant_key}: deleted")
    click.echo(f"live grants revoked first: {deleted.revoked_families}")
    for table, count in deleted.counts.items():
        if table != "companies":
            click.echo(f"{table} removed: {count}")
    click.echo(
        "its audit events are kept until FRONTDESK_AUDIT_RETENTION_DAYS; a companies file"
        " that still lists it creates it again, empty, when applied"
    )


@click.group()
def clients() -> None:
    """A company's OAuth clients (the assistants its customers connect)."""


@clients.command("list")
@click.argument("tenant_key")
def clients_list(tenant_key: str) -> None:
    """Print the company's clients, one tab-separated line each: client id, name, how it is
    known (registered, or by its metadata document's URL), when registered, live grants."""
    config = settings()
    for row in run(lambda: administration.list_clients(config, tenant_key)):
        kind = "registered" if row.registered else "metadata-document"
        click.echo(
            f"{row.client_id}\t{row.client_name or '-'}\t{kind}\t{_when(row.created_at)}"
            f"\t{row.live_grants} live grants"
        )


@clients.command("revoke")
@click.argument("tenant_key")
@click.argument("client_id")
def clients_revoke(tenant_key: str, client_id: str) -> None:
    """End every grant (token family) the client holds at the company, with its tokens.
    Its registration stays: anyone may register a client (RFC 7591), so what stops it is
    that a new connection needs a customer's consent again."""
    config = settings()
    revoked = run(lambda: administration.revoke_client(config, tenant_key, client_id))
    click.echo(_revoked(revoked))


@click.group()
def grants() -> None:
    """Customers' grants: each a token family, from one consent to its revocation."""


@grants.command("list")
@click.argument("tenant_key")
@click.option("--customer", help="Only this customer's (their subject, or email).")
def grants_list(tenant_key: str, customer: str | None) -> None:
    """Print the company's grants, newest first, one tab-separated line each: grant (family)
    id, live or revoked, customer subject, email, client id, scope, granted at, last used."""
    config = settings()
    for row in run(lambda: administration.list_grants(config, tenant_key, customer)):
        state = "live" if row.revoked_at is None else "revoked"
        click.echo(
            f"{row.family_id}\t{state}\t{row.subject}\t{row.email or '-'}\t{row.client_id}"
            f"\t{row.scope}\t{_when(row.created_at)}\t{_when(row.last_used_at)}"
        )


@grants.command("revoke")
@click.argument("tenant_key")
@click.argument("grant_ids", metavar="[GRANT_ID]...", nargs=-1, type=click.IntRange(min=1))
@click.option("--customer", help="Every grant of this customer (their subject, or email).")
def grants_revoke(tenant_key: str, grant_ids: tuple[int, ...], customer: str | None) -> None:
    """Revoke grants by id (from `grants list`), or every grant of --customer: their tokens
    stop working at once, and the client must ask the customer's consent again."""
    if not grant_ids and customer is None:
        raise click.UsageError("name the grants to revoke: GRANT_ID... or --customer")
    config = settings()
    revoked = run(
        lambda: administration.revoke_grants(
            config, tenant_key, family_ids=grant_ids, customer=customer
        )
    )
    click.echo(_revoked(revoked))


def _revoked(family_ids: list[int]) -> str:
    if not family_ids:
        return "nothing to revoke: no live grant matched (already revoked, or none)"
    listed = ", ".join(map(str, family_ids))
    return f"revoked {len(family_ids)} grant(s): {listed}; {REVOKED}"
