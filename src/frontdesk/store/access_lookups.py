"""Access-token lookups on PostgreSQL: answered from memory while PostgreSQL's notices
vouch for it, and otherwise made together when several arrive at once.

Every signed-in MCP call needs its access token's row. A live token found once is kept
here, and dropped when the notice of its revocation, its family's end or its customer's
change arrives (store.change_feed), which PostgreSQL sends every instance as the change
commits. The kept rows are used only while the feed is confirmed, so a session lost or
silently cut off turns them off within store.change_feed.TRUST_SECONDS; a revocation made
by this process is awaited by the feed before it is answered (``caught_up``). The expiry
is compared on every call, against the clock; the row must belong to the company asking.

Any other call goes to PostgreSQL. Under load many calls start in the same turn of the
event loop (the HTTP server hands over every request that arrived together before any of
them runs on); each lookup waits for the end of that turn and the lookups gathered
by then go as one statement: one round trip, one statement for the server, one result to
decode. A lookup joins only a batch not sent yet, so it sees every revocation committed
before it asked, and a batch's rows are kept only if no notice arrived while it ran.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NamedTuple

from frontdesk.store import hot_statements
from frontdesk.store.change_feed import ChangeFeed
from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.hot_statements import compiled
from frontdesk.store.postgres import AsyncpgPool, DatabaseUnavailable

# Live tokens only (store.hot_statements.FIND_LIVE_ACCESS_TOKENS says what it finds and
# marks), compiled for asyncpg. The tenant is compared by the caller, so one statement
# serves lookups from several companies.
FIND_LIVE_ACCESS_TOKENS = compiled(
    hot_statements.FIND_LIVE_ACCESS_TOKENS, "postgresql+asyncpg", ("token_hashes", "now")
).text


class LiveAccessToken(NamedTuple):
    """A live token's row: the company it belongs to, the grant behind it, and what a
    notice may name to end it."""

    tenant_key: str
    grant: AccessRecord
    expires_at: float  # seconds since the epoch
    family_id: int
    customer_id: int


# Live tokens kept per process. A signed-in customer's client calls with one token until it
# refreshes; beyond this many, the oldest kept is dropped (a row is about 1 kB).
MAX_KEPT = 10_000


# Per token hash, the calls waiting for it: each with the company it asked for.
Waiters = dict[str, list[tuple[asyncio.Future[AccessRecord | None], str]]]


class AccessLookups:
    def __init__(self, pool: AsyncpgPool, feed: ChangeFeed) -> None:
        self._pool = pool
        self._feed = feed
        feed.subscribe(self._forget)
        # Live tokens by hash, oldest first; consulted only while the feed is confirmed.
        self._kept: dict[str, LiveAccessToken] = {}
        # Lookups not sent yet, by token hash (concurrent calls often carry the same token).
        self._gathering: Waiters = {}
        self._sending_scheduled = False
        # Batches under way, held so that the event loop does not lose their tasks.
        self._sending: set[asyncio.Task[None]] = set()

    def find(self, token_hash: str, tenant_key: str) -> asyncio.Future[AccessRecord | None]:
        """The grant behind the live token with this hash, if it belongs to this company.
        A future to await, not a coroutine: one less for every signed-in call to pass
        through, on the way out and on the way back."""
        loop = asyncio.get_running_loop()
        found: asyncio.Future[AccessRecord | None] = loop.create_future()
        kept = self._kept.get(token_hash)
        if kept is not None and self._feed.confirmed():
            if kept.expires_at > time.time():
                found.set_result(_grant_for(kept, tenant_key))
                return found
            del self._kept[token_hash]
        self._feed.start()
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
            task = asyncio.ensure_future(self._look_up(batch, self._feed.generation))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _look_up(self, batch: Waiters, generation: int) -> None:
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
        live_tokens = {
            row[0]: LiveAccessToken(row[1], AccessRecord(*row[5:]), row[2].timestamp(), *row[3:5])
            for row in rows
        }
        # A notice that arrived while the statement ran may have ended one of these rows
        # after the statement read it: then none is kept (the answers stand, as they would
        # for a lookup made a moment earlier).
        if self._feed.generation == generation:
            self._keep(live_tokens)
        for token_hash, waiters in batch.items():
            live = live_tokens.get(token_hash)
            for found, tenant_key in waiters:
                if not found.done():
                    found.set_result(_grant_for(live, tenant_key))

    def _keep(self, live_tokens: dict[str, LiveAccessToken]) -> None:
        kept = self._kept
        kept.update(live_tokens)
        while len(kept) > MAX_KEPT:
            del kept[next(iter(kept))]

    def _forget(self, change: str | None) -> None:
        """A notice from store.change_feed: drop what it names, or everything for None."""
        kept = self._kept
        if change is None or change == "*":
            kept.clear()
        elif change.startswith("a:"):
            kept.pop(change[2:], None)
        elif change.startswith("f:") and change[2:].isdigit():
            # Families end and customers change rarely beside calls: a scan is enough.
            family = int(change[2:])
            self._forget_where(lambda live: live.family_id == family)
        elif change.startswith("c:") and change[2:].isdigit():
            customer = int(change[2:])
            self._forget_where(lambda live: live.customer_id == customer)
        else:
            # Not a notice this version knows (a newer schema's?): dropping all is safe.
            kept.clear()

    def _forget_where(self, ended: Callable[[LiveAccessToken], bool]) -> None:
        for token_hash in [key for key, live in self._kept.items() if ended(live)]:
            del self._kept[token_hash]


def _grant_for(live: LiveAccessToken | None, tenant_key: str) -> AccessRecord | None:
    # Another company's token is no token here.
    if live is None or live.tenant_key != tenant_key:
        return None
    return live.grant


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
