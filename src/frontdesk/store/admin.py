"""What an operator reads and ends from the command line: a company's clients, grants and
customers' events, its deactivation and its deletion.

Every query names the company (its tenant key): one company's rows are never read or
changed through another's. A grant is a token family (store.families): revoking one goes
through ``revoke_family_in``, as a customer's or client's revocation does, so it records
the same audit events and, on PostgreSQL, fires the same change-notice triggers (migration
0004): every instance drops the family's kept access tokens as the revocation commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store import consents as remembered
from frontdesk.store.admin_keys import revoke_company_keys
from frontdesk.store.database import for_reads
from frontdesk.store.families import revoke_family_in
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import (
    access_tokens,
    audit_events,
    authorization_codes,
    companies,
    consents,
    customers,
    oauth_clients,
    refresh_tokens,
    signing_keys,
    spent_flows,
    token_families,
    tool_snapshots,
    tool_usage,
    tool_usage_customers,
    tool_versions,
)


@dataclass(frozen=True, slots=True)
class ClientRow:
    client_id: str
    # None for a client known by its metadata document's URL (never stored, oauth.
    # client_documents) or one registered without a name.
    client_name: str | None
    registered: bool
    created_at: datetime | None
    live_grants: int


@dataclass(frozen=True, slots=True)
class GrantRow:
    family_id: int
    client_id: str
    subject: str
    email: str | None
    scope: str
    created_at: datetime
    revoked_at: datetime | None
    # The newest access token's first use at the MCP endpoint, if any was used.
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class DeletedCompany:
    """Rows removed with a company, per table; families revoked first, then removed."""

    revoked_families: int
    counts: dict[str, int]


def _customer_matches(tenant_key: str, customer: str) -> Select[tuple[int]]:
    """The ids of the company's customers whose subject, or email, is ``customer``."""
    return select(customers.c.id).where(
        customers.c.tenant_key == tenant_key,
        or_(customers.c.subject == customer, customers.c.email == customer),
    )


class Administration:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)

    async def company_exists(self, tenant_key: str) -> bool:
        query = select(companies.c.id).where(companies.c.tenant_key == tenant_key)
        async with self._reads.connect() as connection:
            return (await connection.execute(query)).first() is not None

    async def has_audit_events(self, tenant_key: str) -> bool:
        """A deleted company's events stay until their retention ends."""
        query = select(audit_events.c.id).where(audit_events.c.tenant_key == tenant_key).limit(1)
        async with self._reads.connect() as connection:
            return (await connection.execute(query)).first() is not None

    async def customer_exists(self, tenant_key: str, customer: str) -> bool:
        async with self._reads.connect() as connection:
            found = await connection.execute(_customer_matches(tenant_key, customer).limit(1))
            return found.first() is not None

    async def set_active(self, tenant_key: str, active: bool, now: datetime) -> bool:
        """Mark the company (in)active; False when it already was. The revision goes up, so
        every instance reloads it within FRONTDESK_COMPANY_CACHE_SECONDS."""
        async with self._engine.begin() as connection:
            row = (
                await connection.execute(
                    select(companies.c.definition, companies.c.revision)
                    .where(companies.c.tenant_key == tenant_key)
                    .with_for_update()
                )
            ).one()
            definition: dict[str, Any] = dict(row.definition)
            if definition.get("active", True) == active:
                return False
            # Only this field: the rest, sealed secrets included, is written back as read.
            definition["active"] = active
            await connection.execute(
                update(companies)
                .where(companies.c.tenant_key == tenant_key)
                .values(definition=definition, revision=row.revision + 1, updated_at=now)
            )
        return True

    async def clients(self, tenant_key: str) -> list[ClientRow]:
        """Registered clients, and those known only by their grants (a metadata document's
        URL), each with its live grant count; sorted by client id."""
        family = token_families.c
        live = (
            select(family.client_id, func.count().label("live"))
            .where(family.tenant_key == tenant_key, family.revoked_at.is_(None))
            .group_by(family.client_id)
        )
        granted = select(family.client_id).where(family.tenant_key == tenant_key).distinct()
        registered = select(
            oauth_clients.c.client_id, oauth_clients.c.client_name, oauth_clients.c.created_at
        ).where(oauth_clients.c.tenant_key == tenant_key)
        async with self._reads.connect() as connection:
            counts = {row[0]: int(row[1]) for row in await connection.execute(live)}
            stored = {row[0]: row for row in await connection.execute(registered)}
            others = [row[0] for row in await connection.execute(granted)]
        rows = [
            ClientRow(key, row.client_name, True, as_utc(row.created_at), counts.get(key, 0))
            for key, row in stored.items()
        ]
        rows += [
            ClientRow(key, None, False, None, counts.get(key, 0))
            for key in others
            if key not in stored
        ]
        return sorted(rows, key=lambda row: row.client_id)

    async def client_known(self, tenant_key: str, client_id: str) -> bool:
        registered = select(oauth_clients.c.client_id).where(
            oauth_clients.c.tenant_key == tenant_key, oauth_clients.c.client_id == client_id
        )
        granted = select(token_families.c.id).where(
            token_families.c.tenant_key == tenant_key, token_families.c.client_id == client_id
        )
        async with self._reads.connect() as connection:
            for query in (registered, granted):
                if (await connection.execute(query.limit(1))).first() is not None:
                    return True
        return False

    async def known_families(self, tenant_key: str, family_ids: Sequence[int]) -> set[int]:
        """Those of ``family_ids`` that are this company's."""
        query = select(token_families.c.id).where(
            token_families.c.tenant_key == tenant_key, token_families.c.id.in_(list(family_ids))
        )
        async with self._reads.connect() as connection:
            return {int(row[0]) for row in await connection.execute(query)}

    async def grants(self, tenant_key: str, customer: str | None = None) -> list[GrantRow]:
        """The company's token families, newest first; only ``customer``'s when given."""
        family = token_families.c
        last_used = (
            select(func.max(access_tokens.c.used_at))
            .where(access_tokens.c.family_id == family.id)
            .scalar_subquery()
        )
        query = (
            select(
                family.id,
                family.client_id,
                customers.c.subject,
                customers.c.email,
                family.scope,
                family.created_at,
                family.revoked_at,
                last_used,
            )
            .join(customers, customers.c.id == family.customer_id)
            .where(family.tenant_key == tenant_key)
            .order_by(family.created_at.desc(), family.id.desc())
        )
        if customer is not None:
            query = query.where(family.customer_id.in_(_customer_matches(tenant_key, customer)))
        async with self._reads.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [
            GrantRow(
                family_id=row[0],
                client_id=row[1],
                subject=row[2],
                email=row[3],
                scope=row[4],
                created_at=as_utc(row[5]),
                revoked_at=None if row[6] is None else as_utc(row[6]),
                last_used_at=None if row[7] is None else as_utc(row[7]),
            )
            for row in rows
        ]

    async def revoke_families(
        self,
        tenant_key: str,
        now: datetime,
        reason: str,
        *,
        family_ids: Sequence[int] = (),
        customer: str | None = None,
        client_id: str | None = None,
    ) -> list[int]:
        """Revoke the company's live families that are named by id, or belong to the
        customer or the client, in one transaction; the ids revoked. Their pending
        authorization codes go too, so none becomes a new family after this, and what each
        customer allowed each client is forgotten (store.consents): the next sign-in asks
        for consent again."""
        family = token_families.c
        chosen: list[ColumnElement[bool]] = []
        codes: list[ColumnElement[bool]] = []
        if family_ids:
            chosen.append(family.id.in_(list(family_ids)))
        if customer is not None:
            matches = _customer_matches(tenant_key, customer)
            chosen.append(family.customer_id.in_(matches))
            codes.append(authorization_codes.c.customer_id.in_(matches))
        if client_id is not None:
            chosen.append(family.client_id == client_id)
            codes.append(authorization_codes.c.client_id == client_id)
        if not chosen:
            return []
        async with self._engine.begin() as connection:
            live = select(family.id, family.customer_id, family.client_id).where(
                family.tenant_key == tenant_key, family.revoked_at.is_(None), or_(*chosen)
            )
            found = (await connection.execute(live.order_by(family.id))).all()
            for family_id, _, _ in found:
                await revoke_family_in(connection, int(family_id), now, reason)
            for customer_id, revoked_client in {(row[1], row[2]) for row in found}:
                await remembered.forget(connection, tenant_key, customer_id, revoked_client)
            ids = [int(row[0]) for row in found]
            if codes:
                await connection.execute(
                    delete(authorization_codes).where(
                        authorization_codes.c.tenant_key == tenant_key,
                        authorization_codes.c.used_at.is_(None),
                        or_(*codes),
                    )
                )
        return ids

    @staticmethod
    def families_of_customer(tenant_key: str, customer: str) -> Select[tuple[int]]:
        """The ids of the company's families granted to ``customer`` (subject or email)."""
        return select(token_families.c.id).where(
            token_families.c.tenant_key == tenant_key,
            token_families.c.customer_id.in_(_customer_matches(tenant_key, customer)),
        )

    async def delete_company(self, tenant_key: str, now: datetime) -> DeletedCompany:
        """Remove the company with its clients, customers, codes and grants, in one
        transaction. Its live families are revoked first (audited, and announced to every
        instance on PostgreSQL); its audit events stay until their retention ends."""
        async with self._engine.begin() as connection:
            # The company's row first: a worker's usage flush for it holds the row too
            # (store.tool_usage), so the flush either ends before the rows below are
            # deleted, or finds the company gone and writes nothing for it.
            await connection.execute(
                select(companies.c.id).where(companies.c.tenant_key == tenant_key).with_for_update()
            )
            family = token_families.c
            live = select(family.id).where(
                family.tenant_key == tenant_key, family.revoked_at.is_(None)
            )
            ids = [int(row[0]) for row in await connection.execute(live)]
            for family_id in ids:
                await revoke_family_in(connection, family_id, now, "company_deleted")
            counts = await _delete_rows(connection, tenant_key)
            # Its admin keys end with it: a company made again under this tenant key starts
            # with no key of the one deleted (their rows stay for the audit log).
            await revoke_company_keys(connection, tenant_key, now)
        return DeletedCompany(len(ids), counts)


async def _delete_rows(connection: AsyncConnection, tenant_key: str) -> dict[str, int]:
    families = select(token_families.c.id).where(token_families.c.tenant_key == tenant_key)
    # Children before parents (foreign keys): tokens, then families and codes, then the
    # customers they point to.
    steps = [
        ("access_tokens", delete(access_tokens).where(access_tokens.c.family_id.in_(families))),
        (
            "refresh_tokens",
            delete(refresh_tokens).where(refresh_tokens.c.family_id.in_(families)),
        ),
        ("token_families", delete(token_families).where(token_families.c.tenant_key == tenant_key)),
        (
            "authorization_codes",
            delete(authorization_codes).where(authorization_codes.c.tenant_key == tenant_key),
        ),
        ("oauth_clients", delete(oauth_clients).where(oauth_clients.c.tenant_key == tenant_key)),
        ("consents", delete(consents).where(consents.c.tenant_key == tenant_key)),
        (
            "tool_usage_customers",
            delete(tool_usage_customers).where(tool_usage_customers.c.tenant_key == tenant_key),
        ),
        ("customers", delete(customers).where(customers.c.tenant_key == tenant_key)),
        ("spent_flows", delete(spent_flows).where(spent_flows.c.tenant_key == tenant_key)),
        ("tool_usage", delete(tool_usage).where(tool_usage.c.tenant_key == tenant_key)),
        ("signing_keys", delete(signing_keys).where(signing_keys.c.tenant_key == tenant_key)),
        # A company made again under this key starts with no tool history of the deleted one.
        ("tool_versions", delete(tool_versions).where(tool_versions.c.tenant_key == tenant_key)),
        (
            "tool_snapshots",
            delete(tool_snapshots).where(tool_snapshots.c.tenant_key == tenant_key),
        ),
        ("companies", delete(companies).where(companies.c.tenant_key == tenant_key)),
    ]
    counts: dict[str, int] = {}
    for table, statement in steps:
        counts[table] = (await connection.execute(statement)).rowcount
    return counts
