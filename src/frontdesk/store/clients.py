"""Registered OAuth clients (RFC 7591), each belonging to one company."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.database import for_reads
from frontdesk.store.tables import oauth_clients


@dataclass(frozen=True, slots=True)
class Client:
    client_id: str
    tenant_key: str
    client_name: str | None
    redirect_uris: list[str]
    metadata: dict[str, Any]
    created_at: datetime


MAX_KNOWN_CLIENTS = 10_000


class ClientRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._reads = for_reads(engine)
        # Registered clients never change, so a found one is kept (bounded) and the token
        # endpoint's client check costs no query after the first.
        self._known: OrderedDict[tuple[str, str], Client] = OrderedDict()

    async def add(self, client: Client) -> None:
        async with self._engine.begin() as connection:
            await audit.record(
                connection,
                client.tenant_key,
                Event.CLIENT_REGISTERED,
                client.created_at,
                client_id=client.client_id,
                client_name=client.client_name,
                redirect_uris=client.redirect_uris,
            )
            await connection.execute(
                insert(oauth_clients).values(
                    client_id=client.client_id,
                    tenant_key=client.tenant_key,
                    client_name=client.client_name,
                    redirect_uris=client.redirect_uris,
                    metadata=client.metadata,
                    created_at=client.created_at,
                )
            )

    async def get(self, tenant_key: str, client_id: str) -> Client | None:
        """The client, only if it belongs to this company."""
        if "\x00" in client_id:
            # No client id holds a NUL, and PostgreSQL refuses one in a text parameter.
            return None
        known = self._known.get((tenant_key, client_id))
        if known is not None:
            return known
        query = select(
            oauth_clients.c.client_id,
            oauth_clients.c.tenant_key,
            oauth_clients.c.client_name,
            oauth_clients.c.redirect_uris,
            oauth_clients.c.metadata,
            oauth_clients.c.created_at,
        ).where(
            oauth_clients.c.client_id == client_id,
            oauth_clients.c.tenant_key == tenant_key,
        )
        async with self._reads.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        client = Client(*row)
        self._known[(tenant_key, client_id)] = client
        if len(self._known) > MAX_KNOWN_CLIENTS:
            self._known.popitem(last=False)
        return client
