"""The assistants a customer has connected, as their account page shows them, and the
customer's own revocation of one (frontdesk.account).

Every statement filters on the company and the customer: a customer never sees, nor ends,
another's grants, in their own company or any other. A revocation ends the client's token
families through store.families, as every other revocation does, in one transaction with
its audit events and with forgetting what the customer allowed it (store.consents); on
PostgreSQL migration 0004's trigger announces it, and, as in store.grants_postgres, the
answer waits until this instance has heard it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import audit, consents, grant_narrowing
from frontdesk.store.audit import Event
from frontdesk.store.database import for_reads
from frontdesk.store.families import revoke_family_in
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import (
    access_tokens,
    customers,
    oauth_clients,
    refresh_tokens,
    token_families,
)

if TYPE_CHECKING:
    # Only on PostgreSQL; its module loads asyncpg, which a SQLite worker never needs.
    from frontdesk.store.change_feed import ChangeFeed

# The reason recorded with each family a customer ends (audit event family_revoked).
REVOKED_BY_CUSTOMER = "customer_revoked"
# More clients than anyone connects; a bound on what one page reads.
MAX_CLIENTS = 200


@dataclass(frozen=True, slots=True)
class ConnectedClient:
    client_id: str
    # A registered client's own name, unverified; None for a metadata-document client.
    registered_name: str | None
    scopes: tuple[str, ...]
    # When the customer last allowed it (its newest live family).
    allowed_at: datetime
    # The latest first use of one of its access tokens, or spend of a refresh token.
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class AccountHolder:
    email: str | None
    name: str | None


def _live(now: datetime) -> ColumnElement[bool]:
    """A family that still lets its client in: unrevoked, with an unexpired access token or
    an unspent, unexpired refresh token."""
    family = token_families.c
    access, refresh = access_tokens.c, refresh_tokens.c
    return and_(
        family.revoked_at.is_(None),
        or_(
            select(access.token_hash)
            .where(
                access.family_id == family.id,
                access.revoked_at.is_(None),
                access.expires_at > now,
            )
            .exists(),
            select(refresh.token_hash)
            .where(
                refresh.family_id == family.id,
                refresh.used_at.is_(None),
                refresh.expires_at > now,
            )
            .exists(),
        ),
    )


class ConnectedClients:
    def __init__(self, engine: AsyncEngine, feed: ChangeFeed | None) -> None:
        self._engine = engine
        self._reads = for_reads(engine)
        # PostgreSQL's grant notices, where tokens are kept in memory (store.access_lookups).
        self._feed = feed

    async def holder(self, tenant_key: str, customer_id: int) -> AccountHolder | None:
        query = select(customers.c.email, customers.c.name).where(
            customers.c.id == customer_id, customers.c.tenant_key == tenant_key
        )
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else AccountHolder(row.email, row.name)

    async def connected(
        self, tenant_key: str, customer_id: int, now: datetime
    ) -> list[ConnectedClient]:
        """One entry per client with a live family of this customer, newest allowed first."""
        family = token_families.c
        last_access = (
            select(func.max(access_tokens.c.used_at))
            .where(access_tokens.c.family_id == family.id)
            .scalar_subquery()
        )
        last_refresh = (
            select(func.max(refresh_tokens.c.used_at))
            .where(refresh_tokens.c.family_id == family.id)
            .scalar_subquery()
        )
        query = (
            select(
                family.client_id,
                oauth_clients.c.client_name,
                family.scope,
                family.created_at,
                last_access,
                last_refresh,
            )
            .outerjoin(
                oauth_clients,
                and_(
                    oauth_clients.c.client_id == family.client_id,
                    oauth_clients.c.tenant_key == family.tenant_key,
                ),
            )
            .where(family.tenant_key == tenant_key, family.customer_id == customer_id, _live(now))
            .order_by(family.created_at.desc(), family.id.desc())
            .limit(MAX_CLIENTS * 4)
        )
        async with self._reads.connect() as connection:
            rows = (await connection.execute(query)).all()
        return _by_client(rows)[:MAX_CLIENTS]

    async def revoke(self, tenant_key: str, customer_id: int, client_id: str, now: datetime) -> int:
        """End every unrevoked family of this client for this customer, and forget what the
        customer allowed it; how many families ended."""
        family = token_families.c
        async with self._engine.begin() as connection:
            families = (
                await connection.execute(
                    select(family.id).where(
                        family.tenant_key == tenant_key,
                        family.customer_id == customer_id,
                        family.client_id == client_id,
                        family.revoked_at.is_(None),
                    )
                )
            ).scalars()
            ended = [int(family_id) for family_id in families]
            for family_id in ended:
                await audit.record(
                    connection,
                    tenant_key,
                    Event.TOKEN_REVOKED,
                    now,
                    client_id=client_id,
                    family_id=family_id,
                    revoked="by_customer",
                )
                await revoke_family_in(connection, family_id, now, REVOKED_BY_CUSTOMER)
            # Its next sign-in asks the customer again (store.consents).
            await consents.forget(connection, tenant_key, customer_id, client_id)
        if ended and self._feed is not None:
            # Taken effect here before the customer is told it did (store.grants_postgres).
            await self._feed.caught_up()
        return len(ended)

    async def narrow(
        self,
        tenant_key: str,
        customer_id: int,
        client_id: str,
        scopes: frozenset[str],
        now: datetime,
    ) -> int:
        """Take tool scopes back from this client (store.grant_narrowing)."""
        return await grant_narrowing.narrow(
            self._engine, self._feed, tenant_key, customer_id, client_id, scopes, now
        )


def _by_client(rows: Iterable[Sequence[Any]]) -> list[ConnectedClient]:
    """Rows of families, newest first, folded into one entry per client."""
    folded: dict[str, ConnectedClient] = {}
    for client_id, name, scope, created_at, *used in rows:
        moments = [as_utc(moment) for moment in used if moment is not None]
        last_used = max(moments, default=None)
        seen = folded.get(client_id)
        if seen is None:
            folded[client_id] = ConnectedClient(
                client_id, name, tuple(sorted(scope.split())), as_utc(created_at), last_used
            )
            continue
        if seen.last_used_at is not None and (last_used is None or seen.last_used_at > last_used):
            last_used = seen.last_used_at
        folded[client_id] = replace(
            seen,
            scopes=tuple(sorted({*seen.scopes, *scope.split()})),
            last_used_at=last_used,
        )
    return list(folded.values())
