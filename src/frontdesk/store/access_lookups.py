"""Access-token lookups on PostgreSQL, made together when several arrive at once.

Every signed-in MCP call reads its access token's row, and under load many calls start in
the same turn of the event loop (uvicorn starts every request it parsed from one batch of
socket reads before any of them runs on). Each lookup waits for the end of that turn and
the lookups gathered by then go to PostgreSQL as one statement: one round trip, one
statement for the server, one result to decode, however many calls asked.

Nothing is cached and no check is loosened. A lookup joins only a batch that has not been
sent yet, so it sees every revocation committed before it asked; the expiry is checked
against the time the statement runs, never earlier than the call arrived; the row must
belong to the company that asked.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import NamedTuple

from frontdesk.store.grants import AccessRecord
from frontdesk.store.postgres import DatabaseUnavailable, DriverPool

# Live tokens only: unexpired, unrevoked, of a family not revoked. The tenant is compared
# by the caller, so one statement serves lookups from several companies.
FIND_LIVE_ACCESS_TOKENS = """
SELECT a.token_hash, f.tenant_key, f.client_id, f.scope, f.resource,
       c.subject, c.email, c.name
FROM access_tokens a
JOIN token_families f ON f.id = a.family_id
JOIN customers c ON c.id = f.customer_id
WHERE a.token_hash = ANY($1::text[]) AND a.expires_at > $2
  AND a.revoked_at IS NULL AND f.revoked_at IS NULL
"""


class LiveAccessToken(NamedTuple):
    """A live token's row: the company it belongs to, and the grant behind it."""

    tenant_key: str
    grant: AccessRecord


# Per token hash, the calls waiting for it: each with the company it asked for.
Waiters = dict[str, list[tuple[asyncio.Future[AccessRecord | None], str]]]


class AccessLookups:
    def __init__(self, pool: DriverPool) -> None:
        self._pool = pool
        # Lookups not sent yet, by token hash (concurrent calls often carry the same token).
        self._gathering: Waiters = {}
        self._sending_scheduled = False
        # Batches under way, held so that the event loop does not lose their tasks.
        self._sending: set[asyncio.Task[None]] = set()

    def find(self, token_hash: str, tenant_key: str) -> asyncio.Future[AccessRecord | None]:
        """The grant behind the live token with this hash, if it belongs to this company,
        once its batch is answered. A future to await, not a coroutine: one less for every
        signed-in call to pass through, on the way out and on the way back."""
        loop = asyncio.get_running_loop()
        found: asyncio.Future[AccessRecord | None] = loop.create_future()
        self._gathering.setdefault(token_hash, []).append((found, tenant_key))
        if not self._sending_scheduled:
            self._sending_scheduled = True
            # call_soon runs after the callbacks already due in this turn: the other
            # requests started in it reach their lookup first.
            loop.call_soon(self._send)
        return found

    def _send(self) -> None:
        self._sending_scheduled = False
        batch, self._gathering = self._gathering, {}
        if batch:
            task = asyncio.ensure_future(self._look_up(batch))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _look_up(self, batch: Waiters) -> None:
        try:
            async with self._pool.connection() as connection:
                rows = await connection.fetch(
                    FIND_LIVE_ACCESS_TOKENS, list(batch), datetime.now(UTC)
                )
        except BaseException as error:
            for waiters in batch.values():
                for found, _tenant in waiters:
                    if found.done():
                        continue
                    if isinstance(error, Exception):
                        found.set_exception(_failure_for_one(error))
                    else:
                        # Cancelled (the loop is shutting down): so are the calls waiting.
                        found.cancel()
            if not isinstance(error, Exception):
                raise
            return
        live_tokens = {row[0]: LiveAccessToken(row[1], AccessRecord(*row[2:])) for row in rows}
        for token_hash, waiters in batch.items():
            live = live_tokens.get(token_hash)
            for found, tenant_key in waiters:
                if found.done():
                    continue
                # Another company's token is no token here.
                if live is None or live.tenant_key != tenant_key:
                    found.set_result(None)
                else:
                    found.set_result(live.grant)


def _failure_for_one(error: Exception) -> Exception:
    """An exception of its own for each waiting call (one raised in many tasks would collect
    all their tracebacks), saying what the shared statement's failure means."""
    failure: Exception
    if isinstance(error, DatabaseUnavailable):
        failure = DatabaseUnavailable(str(error))
    else:
        failure = RuntimeError(f"the access-token lookup failed: {type(error).__name__}")
    failure.__cause__ = error
    return failure
