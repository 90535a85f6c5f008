"""What each customer has allowed each client: the consent page is shown once per client
and set of scopes, not at every sign-in, until the customer revokes the client.

One row per (company, customer, client), holding the union of every scope the customer
allowed that client: a later sign-in asking for the same scopes or fewer is not asked
again; one asking for more shows the page, and allowing it widens the row. Revoking the
client's grants forgets the row (store.token_revocation, and whoever ends a customer's
grants: call ``forget`` in the same transaction), so the next sign-in asks again.

Plain functions on a connection, to run inside a caller's transaction, and
``ConsentRepository`` for the OAuth steps, which own none.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from frontdesk.store.tables import consents


def _scopes(scope: str) -> frozenset[str]:
    return frozenset(scope.split())


async def _allowed(
    connection: AsyncConnection, tenant_key: str, customer_id: int, client_id: str
) -> str | None:
    found = await connection.execute(
        select(consents.c.scope).where(
            consents.c.tenant_key == tenant_key,
            consents.c.customer_id == customer_id,
            consents.c.client_id == client_id,
        )
    )
    scope = found.scalar()
    return None if scope is None else str(scope)


async def has_consented(
    connection: AsyncConnection, tenant_key: str, customer_id: int, client_id: str, scope: str
) -> bool:
    """Whether the customer allowed this client at least ``scope`` (space-separated)."""
    allowed = await _allowed(connection, tenant_key, customer_id, client_id)
    return allowed is not None and _scopes(scope) <= _scopes(allowed)


async def remember(
    connection: AsyncConnection,
    tenant_key: str,
    customer_id: int,
    client_id: str,
    scope: str,
    now: datetime,
    tool_snapshot: str | None = None,
) -> None:
    """Record that the customer allowed ``scope``, widening what they allowed before, and
    the company's tools as ``tool_snapshot`` names them (the latest consent's, kept as it
    stands: oauth.tool_consent). Raises IntegrityError when a concurrent sign-in inserted
    the row first."""
    allowed = await _allowed(connection, tenant_key, customer_id, client_id)
    if allowed is None:
        await connection.execute(
            insert(consents).values(
                tenant_key=tenant_key,
                customer_id=customer_id,
                client_id=client_id,
                scope=" ".join(sorted(_scopes(scope))),
                granted_at=now,
                updated_at=now,
                tool_snapshot=tool_snapshot,
            )
        )
        return
    widened = " ".join(sorted(_scopes(allowed) | _scopes(scope)))
    await connection.execute(
        update(consents)
        .where(
            consents.c.tenant_key == tenant_key,
            consents.c.customer_id == customer_id,
            consents.c.client_id == client_id,
        )
        .values(scope=widened, updated_at=now, tool_snapshot=tool_snapshot)
    )


async def forget(
    connection: AsyncConnection, tenant_key: str, customer_id: int, client_id: str
) -> None:
    """Forget what the customer allowed this client: their next sign-in shows the consent
    page."""
    await connection.execute(
        delete(consents).where(
            consents.c.tenant_key == tenant_key,
            consents.c.customer_id == customer_id,
            consents.c.client_id == client_id,
        )
    )


class ConsentRepository:
    """The same, each in a transaction of its own."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def has_consented(
        self, tenant_key: str, customer_id: int, client_id: str, scope: str
    ) -> bool:
        async with self._engine.connect() as connection:
            return await has_consented(connection, tenant_key, customer_id, client_id, scope)

    async def tool_snapshot(self, tenant_key: str, customer_id: int, client_id: str) -> str | None:
        """The tool versions the customer's latest consent to this client covered."""
        async with self._engine.connect() as connection:
            found = await connection.execute(
                select(consents.c.tool_snapshot).where(
                    consents.c.tenant_key == tenant_key,
                    consents.c.customer_id == customer_id,
                    consents.c.client_id == client_id,
                )
            )
            snapshot = found.scalar()
        return None if snapshot is None else str(snapshot)

    async def remember(
        self,
        tenant_key: str,
        customer_id: int,
        client_id: str,
        scope: str,
        tool_snapshot: str | None = None,
    ) -> None:
        now = datetime.now(UTC)
        arguments = (tenant_key, customer_id, client_id, scope, now, tool_snapshot)
        try:
            async with self._engine.begin() as connection:
                await remember(connection, *arguments)
        except IntegrityError:
            # The same customer finished two sign-ins of this client at once and the other
            # insert won: this second try finds that row and widens it.
            async with self._engine.begin() as connection:
                await remember(connection, *arguments)
