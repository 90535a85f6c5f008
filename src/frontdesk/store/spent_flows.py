"""Sign-in flows spent by their callback (oauth.flow), shared by every instance.

Spending is one INSERT of the flow's hash as a primary key: of two concurrent callbacks
with one flow, the database lets exactly one insert commit, and the other fails on the key
(PostgreSQL makes the second wait for the first to commit; SQLite lets one writer in at a
time). Nothing is read first, so there is no window between a check and the write.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store.tables import spent_flows


class SpentFlowRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def spend(self, tenant_key: str, flow_hash: str, expires_at: datetime) -> bool:
        """Record the flow as spent; False when it already was."""
        try:
            async with self._engine.begin() as connection:
                await connection.execute(
                    insert(spent_flows).values(
                        flow_hash=flow_hash, tenant_key=tenant_key, expires_at=expires_at
                    )
                )
        except IntegrityError:
            # The key was there: a callback, here or at another instance, spent it first.
            return False
        return True
