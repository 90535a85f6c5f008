"""A customer's narrowing of what they allowed a client (the account page, frontdesk.account):
tool scopes taken out of every live token family of that client, and out of what the
customer allowed it (store.consents), in one transaction with its audit events.

The family's tokens keep working with what is left: every signed-in call reads its grant's
scope from the family (store.access_grants; on PostgreSQL the update sends the family's
notice, store.change_feed, so no instance answers from a kept row with the old scope), and
a refresh keeps the family's scope, never more (oauth.refresh). A scope is never narrowed to
nothing: a family's empty scope reads as every scope of the service (oauth.grants), so
narrowing refuses it and the page offers "Remove access" for that.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.tables import consents, token_families

if TYPE_CHECKING:
    # Only on PostgreSQL; its module loads asyncpg, which a SQLite worker never needs.
    from frontdesk.store.change_feed import ChangeFeed


class NothingLeft(Exception):
    """Taking the scope out would leave a grant with none."""


def without(scope: str, taken: frozenset[str]) -> str:
    return " ".join(item for item in scope.split() if item not in taken)


async def _narrow_consent(
    connection: AsyncConnection,
    tenant_key: str,
    customer_id: int,
    client_id: str,
    taken: frozenset[str],
) -> None:
    """What the customer allowed this client, without ``taken``: a later sign-in asking for
    it shows the consent page again (store.consents)."""
    row = consents.c
    match = (
        row.tenant_key == tenant_key,
        row.customer_id == customer_id,
        row.client_id == client_id,
    )
    allowed = (await connection.execute(select(row.scope).where(*match))).scalar()
    if allowed is not None and not taken.isdisjoint(allowed.split()):
        narrowed = without(allowed, taken)
        await connection.execute(update(consents).where(*match).values(scope=narrowed))


async def narrow(
    engine: AsyncEngine,
    feed: ChangeFeed | None,
    tenant_key: str,
    customer_id: int,
    client_id: str,
    taken: frozenset[str],
    now: datetime,
) -> int:
    """Take the scopes ``taken`` out of this customer's unrevoked families of this client;
    how many changed. NothingLeft, and nothing changed, when one would be left with none."""
    family = token_families.c
    async with engine.begin() as connection:
        rows = await connection.execute(
            select(family.id, family.scope).where(
                family.tenant_key == tenant_key,
                family.customer_id == customer_id,
                family.client_id == client_id,
                family.revoked_at.is_(None),
            )
        )
        changed = 0
        for family_id, scope in rows.all():
            if taken.isdisjoint(scope.split()):
                continue
            left = without(scope, taken)
            if not left:
                raise NothingLeft(taken)
            await connection.execute(
                update(token_families).where(family.id == family_id).values(scope=left)
            )
            await audit.record(
                connection,
                tenant_key,
                Event.GRANT_NARROWED,
                now,
                client_id=client_id,
                family_id=int(family_id),
                scopes=sorted(taken.intersection(scope.split())),
            )
            changed += 1
        await _narrow_consent(connection, tenant_key, customer_id, client_id, taken)
    if changed and feed is not None:
        # Taken effect on this instance before the customer is told it did (as a
        # revocation does, store.connected_clients).
        await feed.caught_up()
    return changed
