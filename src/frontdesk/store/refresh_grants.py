"""Refresh tokens (RFC 6749 6): the state a refresh decision reads (oauth.refresh), the
rotation that spends a token for the next pair, the retry that answers that pair again
where the company allows it, and the end of a family.

Each step is a compare-and-set on the state the decision was made from, in one transaction
with the pair it writes and the audit event it records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, insert, literal, select
from sqlalchemy.ext.asyncio import AsyncEngine

from frontdesk.store import audit
from frontdesk.store.audit import Event
from frontdesk.store.families import insert_pair, revoke_family_in
from frontdesk.store.grant_records import Ending, IssuedPair, NewTokens, RefreshState
from frontdesk.store.hot_statements import FIND_REFRESH, SPEND_REFRESH, family_live
from frontdesk.store.moments import as_utc
from frontdesk.store.tables import JsonDocument, audit_events, refresh_tokens

# The refresh token a spent one's rotation produced.
_successor = refresh_tokens.alias("successor")

# What a rotation's audit event records (store.grants_postgres records the same).
ROTATION_DETAIL = {"grant": "refresh_token"}


def refresh_state(row: Sequence[Any]) -> RefreshState:
    """A row of store.hot_statements.FIND_REFRESH, as the engine or asyncpg returns it."""
    family_id, client_id, scope, expires_at, used_at, family_revoked = row[:6]
    successor_hash, successor_spent, successor_sealed = row[6:]
    successor = None
    if successor_hash is not None:
        successor = IssuedPair(successor_hash, bool(successor_spent))
    return RefreshState(
        family_id,
        client_id,
        scope,
        as_utc(expires_at),
        None if used_at is None else as_utc(used_at),
        bool(family_revoked),
        successor,
        successor_sealed,
    )


class RefreshGrants:
    """The refresh-token part of store.grants.GrantRepository."""

    _engine: AsyncEngine
    _reads: AsyncEngine

    async def find_refresh(self, tenant_key: str, token_hash: str) -> RefreshState | None:
        async with self._reads.connect() as connection:
            found = await connection.execute(
                FIND_REFRESH, {"token": token_hash, "tenant": tenant_key}
            )
            row = found.first()
        return None if row is None else refresh_state(row)

    async def rotate_refresh(
        self,
        tenant_key: str,
        token_hash: str,
        state: RefreshState,
        tokens: NewTokens,
        kept_successor: str | None,
        now: datetime,
    ) -> bool:
        async with self._engine.begin() as connection:
            spent = await connection.execute(
                SPEND_REFRESH,
                {
                    "token": token_hash,
                    "family": state.family_id,
                    "now": now,
                    "refresh_hash": tokens.refresh_hash,
                    "kept_successor": kept_successor,
                },
            )
            if spent.rowcount != 1:
                return False
            await insert_pair(connection, state.family_id, tokens, now)
            await audit.record(
                connection,
                tenant_key,
                Event.TOKENS_ISSUED,
                now,
                client_id=state.client_id,
                family_id=state.family_id,
                **ROTATION_DETAIL,
            )
        return True

    async def retry_refresh(
        self, tenant_key: str, token_hash: str, state: RefreshState, now: datetime
    ) -> bool:
        if state.successor is None:
            return False
        token = refresh_tokens.c
        successor = _successor.c
        # The pair as the decision read it: still the token's successor, its refresh token
        # unspent, the family live. The retry's audit event is written on that condition, in
        # one statement, so the retry is answered only if it held when the event committed.
        still_as_read = (
            select(
                literal(tenant_key),
                literal(now, DateTime(timezone=True)),
                literal(Event.REFRESH_RETRIED.value),
                literal(state.client_id),
                literal(state.family_id),
                literal({}, JsonDocument),
            )
            .select_from(
                refresh_tokens.join(_successor, successor.token_hash == token.successor_hash)
            )
            .where(
                token.token_hash == token_hash,
                token.successor_hash == state.successor.refresh_hash,
                successor.used_at.is_(None),
                family_live(state.family_id),
            )
        )
        recorded = audit_events.c
        async with self._engine.begin() as connection:
            written = await connection.execute(
                insert(audit_events).from_select(
                    [
                        recorded.tenant_key,
                        recorded.occurred_at,
                        recorded.event,
                        recorded.client_id,
                        recorded.family_id,
                        recorded.detail,
                    ],
                    still_as_read,
                )
            )
        return written.rowcount == 1

    async def revoke_family(self, family_id: int, now: datetime, ending: Ending) -> None:
        async with self._engine.begin() as connection:
            await revoke_family_in(
                connection, family_id, now, ending.reason, forget_consent=ending.forgets_consent
            )
