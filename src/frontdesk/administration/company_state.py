"""What the operator's commands on a company's state do: deactivate or delete it, list and
revoke its clients and its customers' grants. Typed functions the CLI forwards to;
each ``*_in`` twin works on a database already open, for the admin API (frontdesk.admin_api),
so the command and the API never disagree.

What each does to a company's clients and tokens (and the CLI says so):

- deactivate: every endpoint of the company answers 404 within
  FRONTDESK_COMPANY_CACHE_SECONDS; its clients, grants and tokens are kept, so
  ``companies activate`` (or applying a file that says ``active: true``) restores every
  connection as it was.
- delete: the company, its registered clients, customers, pending codes and grants (token
  families with their tokens) are removed, the grants revoked first so every instance
  drops their kept tokens; its audit events stay until FRONTDESK_AUDIT_RETENTION_DAYS.
- revoking a client or a grant ends token families (store.admin): the client's next call
  with any of their tokens is answered 401, and a refresh is refused (invalid_grant).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from frontdesk.administration.command_database import opened
from frontdesk.config import Settings
from frontdesk.errors import FrontdeskError
from frontdesk.store.admin import Administration, ClientRow, DeletedCompany, GrantRow
from frontdesk.store.database import Database
from frontdesk.usage.report import read_usage

# Why a family was revoked, as its family_revoked audit event records it.
OPERATOR_REVOKED = "operator_revoked"
CLIENT_REVOKED = "client_revoked"


class UnknownCompany(FrontdeskError):
    """No company has this tenant key."""

    def __init__(self, tenant_key: str) -> None:
        super().__init__(f"no company has the tenant key {tenant_key!r}")


class UnknownTarget(FrontdeskError):
    """The company has no such customer or client."""


async def require_company(database: Database, tenant_key: str) -> Administration:
    """The company's administration; UnknownCompany when there is no such company."""
    admin = Administration(database.engine)
    if not await admin.company_exists(tenant_key):
        raise UnknownCompany(tenant_key)
    return admin


async def set_active(settings: Settings, tenant_key: str, active: bool) -> bool:
    """Whether the company's state changed (False: it already was)."""
    async with opened(settings) as database:
        admin = await require_company(database, tenant_key)
        return await admin.set_active(tenant_key, active, datetime.now(UTC))


async def delete_company(settings: Settings, tenant_key: str) -> DeletedCompany:
    async with opened(settings) as database:
        return await delete_company_in(database, tenant_key)


async def delete_company_in(database: Database, tenant_key: str) -> DeletedCompany:
    admin = await require_company(database, tenant_key)
    return await admin.delete_company(tenant_key, datetime.now(UTC))


async def company_usage(
    settings: Settings, tenant_key: str, since: datetime, until: datetime
) -> dict[str, Any]:
    """The company's tool usage over whole hours from ``since`` to ``until`` (exclusive),
    as frontdesk.usage.report reads it."""
    async with opened(settings) as database:
        await require_company(database, tenant_key)
        return await read_usage(database, tenant_key, since, until)


async def list_clients(settings: Settings, tenant_key: str) -> list[ClientRow]:
    async with opened(settings) as database:
        return await list_clients_in(database, tenant_key)


async def list_clients_in(database: Database, tenant_key: str) -> list[ClientRow]:
    admin = await require_company(database, tenant_key)
    return await admin.clients(tenant_key)


async def revoke_client(settings: Settings, tenant_key: str, client_id: str) -> list[int]:
    """End every grant of the client at this company; the family ids revoked."""
    async with opened(settings) as database:
        return await revoke_client_in(database, tenant_key, client_id)


async def revoke_client_in(database: Database, tenant_key: str, client_id: str) -> list[int]:
    admin = await require_company(database, tenant_key)
    if not await admin.client_known(tenant_key, client_id):
        raise UnknownTarget(f"company {tenant_key!r} has no client {client_id!r}")
    return await admin.revoke_families(
        tenant_key, datetime.now(UTC), CLIENT_REVOKED, client_id=client_id
    )


async def list_grants(
    settings: Settings, tenant_key: str, customer: str | None = None
) -> list[GrantRow]:
    async with opened(settings) as database:
        return await list_grants_in(database, tenant_key, customer)


async def list_grants_in(
    database: Database, tenant_key: str, customer: str | None = None
) -> list[GrantRow]:
    admin = await require_company(database, tenant_key)
    if customer is not None:
        await _require_customer(admin, tenant_key, customer)
    return await admin.grants(tenant_key, customer)


async def revoke_grants(
    settings: Settings,
    tenant_key: str,
    *,
    family_ids: Sequence[int] = (),
    customer: str | None = None,
) -> list[int]:
    """Revoke the named families of this company, or every grant of the customer; the ids
    of the families revoked (those already revoked are left as they are)."""
    async with opened(settings) as database:
        return await revoke_grants_in(
            database, tenant_key, family_ids=family_ids, customer=customer
        )


async def revoke_grants_in(
    database: Database,
    tenant_key: str,
    *,
    family_ids: Sequence[int] = (),
    customer: str | None = None,
) -> list[int]:
    admin = await require_company(database, tenant_key)
    if customer is not None:
        await _require_customer(admin, tenant_key, customer)
    if family_ids:
        ours = await admin.known_families(tenant_key, family_ids)
        # Another company's family is as unknown here as one that never was.
        strangers = sorted(set(family_ids) - ours)
        if strangers:
            raise UnknownTarget(
                f"company {tenant_key!r} has no grant {', '.join(map(str, strangers))}"
            )
    return await admin.revoke_families(
        tenant_key,
        datetime.now(UTC),
        OPERATOR_REVOKED,
        family_ids=family_ids,
        customer=customer,
    )


async def _require_customer(admin: Administration, tenant_key: str, customer: str) -> None:
    if not await admin.customer_exists(tenant_key, customer):
        raise UnknownTarget(
            f"company {tenant_key!r} has no customer whose subject or email is {customer!r}"
        )
