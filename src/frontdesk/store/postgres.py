"""asyncpg's own pool beside SQLAlchemy's, for the statements on the hot path.

Every signed-in MCP call looks its access token up, and every refresh grant spends one
token and writes the next pair. Through SQLAlchemy's async layer each of those costs
many times the round trip in Python (statement building, cache keys, a greenlet per
call, result wrapping; figures in docs/decisions/hot-sql.md). These few
statements are written as SQL once and run straight on asyncpg, which prepares each one per
connection and reuses it; everything else keeps SQLAlchemy and its portable schema.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import TYPE_CHECKING, TypeAlias

import asyncpg
from sqlalchemy.engine import make_url

from frontdesk.store.bounds import Timeouts
from frontdesk.store.outage import OUTAGE_SQLSTATES

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    # asyncpg's pool of connections that yield its plain records, and one lent by it.
    Pool: TypeAlias = asyncpg.Pool[asyncpg.Record]
    Connection: TypeAlias = PoolConnectionProxy[asyncpg.Record]


class DatabaseUnavailable(ConnectionError):
    """PostgreSQL is down, restarting or refusing connections: answered 503 (store.outage)."""


class BoundedCloseConnection(asyncpg.Connection):
    """asyncpg's connection, whose close waits for the server at most GOODBYE_SECONDS.

    A close sends PostgreSQL its Terminate message and waits for the server to end the
    connection; asyncpg waits without a bound unless given one, and a stalled server never
    ends it. Both pools close connections on their own (SQLAlchemy an overflow connection as
    it is given back, on the request's path; asyncpg an idle one), so every close is
    bounded here. Past the bound asyncpg aborts the connection itself, which is all a
    close is for: the server sees the socket end either way.
    """

    # asyncpg's own signature, timeout and all (ASYNC109 would have asyncio.timeout).
    async def close(self, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        with contextlib.suppress(TimeoutError):
            await super().close(timeout=GOODBYE_SECONDS if timeout is None else timeout)


def driver_dsn(url: str) -> str:
    """The SQLAlchemy URL (``postgresql+asyncpg://…``) as a DSN asyncpg itself reads."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


# How a connection that went away shows itself: a socket error, a timeout, asyncpg's
# "connection does not exist", or, for an idle connection the server ended during a
# shutdown, an "another operation is in progress" from asyncpg's protocol state, which
# the server's parting message left behind.
_LOST_CONNECTION = (
    OSError,
    TimeoutError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.exceptions.InternalClientError,
)


def _as_outage(error: BaseException, connection_lost: bool = False) -> DatabaseUnavailable | None:
    """The outage an asyncpg or socket error means, or None for any other error.

    ``connection_lost``: the connection (or the pool) the error came from is closed, so an
    interface error ("connection is closed", "pool is closing") is the server or the
    process going away, not a bug.
    """
    lost = connection_lost and isinstance(error, asyncpg.InterfaceError)
    if lost or isinstance(error, _LOST_CONNECTION):
        return DatabaseUnavailable(str(error) or type(error).__name__)
    if isinstance(error, asyncpg.PostgresError) and str(error.sqlstate or "").startswith(
        OUTAGE_SQLSTATES
    ):
        return DatabaseUnavailable(str(error))
    return None


# asyncpg prepares each statement once per connection, and after five runs PostgreSQL may
# keep one generic plan for it, costed on the table sizes of that moment. Prepared while a
# table was small, a plan kept its sequential scan once the table had grown (docs/design.md
# has the figures). Each pool's sessions are set so that cannot happen:
#
# Statements that find rows by key (the refresh grant's) keep their generic plans, which
# spare the server a planning per run, with sequential scans ruled out: every table they
# read is reached through a key, whatever its size when the plan was made.
KEYED_STATEMENTS = {"enable_seqscan": "off"}
# The batched lookup (a list of keys) is planned again on every run, which costs the
# server a fraction of a millisecond once per batch: ruling out sequential scans was not
# enough to keep its generic plan from going stale.
PLANNED_PER_RUN = {"plan_cache_mode": "force_custom_plan"}

# Every wait is bounded (store.bounds), and each bound ends in DatabaseUnavailable (a 503
# the client may retry). A hot statement takes a fraction of a millisecond and waits at
# most for a row lock held by another grant's short transaction, so a statement still
# running after Timeouts.statement means a stalled server; the server is given the same
# bound, so it stops the statement too. Timeouts.acquire covers queueing for a busy
# connection and opening a new one, Timeouts.connect the opening alone (TCP, TLS, start-up).
CLOSE_SECONDS = 5.0
# How long closing one connection waits for the server to end it (BoundedCloseConnection).
GOODBYE_SECONDS = 1.0
# A connection left idle this long is closed: the extra connections a burst opened, each
# a backend process on the server, do not stay open for good.
IDLE_SECONDS = 300.0


async def _keep_session(_connection: asyncpg.Connection[asyncpg.Record]) -> None:
    """Given back to the pool as it is: these statements change no session state (no SET,
    LISTEN, cursor or advisory lock), so asyncpg's reset query would be a round trip per
    statement for nothing. asyncpg still rolls back a transaction left open."""


class AsyncpgPool:
    """asyncpg's pool of up to ``max_size`` connections, made on first use.

    Made in the event loop that uses it (asyncpg binds a pool to its loop), with no
    connection opened until a statement needs one: a process that never runs a hot
    statement opens none. Borrowing maps an outage to DatabaseUnavailable, and a
    connection whose statement raised is closed rather than lent again, since asyncpg may
    still be midway through the exchange (during a server shutdown it is: the next borrower
    would find "another operation is in progress"). These statements fail rarely enough
    that a reconnect is cheap.
    """

    def __init__(
        self,
        url: str,
        max_size: int,
        session_settings: dict[str, str],
        timeouts: Timeouts | None = None,
    ) -> None:
        self._dsn = driver_dsn(url)
        self._max_size = max_size
        self.timeouts = timeouts = timeouts or Timeouts()
        self._session_settings = {**timeouts.server_settings(), **session_settings}
        self._pool: Pool | None = None
        self._making = asyncio.Lock()
        self._closed = False

    def connection(self) -> Borrowed:
        """``async with pool.connection() as connection:``; a lost, stalled or refused
        server is raised as DatabaseUnavailable."""
        return Borrowed(self)

    def lent(self) -> int:
        """Connections lent out right now (the pool-use gauge, store.pool_use)."""
        pool = self._pool
        return 0 if pool is None else pool.get_size() - pool.get_idle_size()

    async def ready(self) -> Pool:
        """The pool, made on first use."""
        async with self._making:
            if self._closed:
                raise DatabaseUnavailable("the connection pool is closed")
            if self._pool is None:
                # asyncpg's statement cache stays as it is (100 per connection): each hot
                # statement is prepared once per connection and reused.
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=self._max_size,
                    max_inactive_connection_lifetime=IDLE_SECONDS,
                    reset=_keep_session,
                    timeout=self.timeouts.connect,
                    command_timeout=self.timeouts.statement,
                    server_settings=self._session_settings,
                    connection_class=BoundedCloseConnection,
                )
            return self._pool

    async def close(self) -> None:
        """Close every connection once it is given back, within CLOSE_SECONDS; then any
        still lent are cut off, and their borrowers get DatabaseUnavailable."""
        async with self._making:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is None:
            return
        # On a timeout asyncpg's close terminates every connection itself.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(pool.close(), CLOSE_SECONDS)


class Borrowed:
    __slots__ = ("_connection", "_owner", "_pool")

    def __init__(self, owner: AsyncpgPool) -> None:
        self._owner = owner
        self._pool: Pool | None = None
        self._connection: Connection | None = None

    async def __aenter__(self) -> Connection:
        pool = self._owner._pool
        if pool is None:
            pool = await self._owner.ready()
        self._pool = pool
        try:
            self._connection = await pool.acquire(timeout=self._owner.timeouts.acquire)
        except Exception as error:
            outage = _as_outage(error, connection_lost=pool.is_closing())
            if outage is None:
                raise
            raise outage from error
        return self._connection

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is None or self._pool is None:
            return
        if exc is None:
            # The statement's answer stands even if the connection cannot be given back;
            # asyncpg then terminates it, and opens another when one is next needed.
            with contextlib.suppress(Exception):
                await self._pool.release(connection)
            return
        lost = _is_closed(connection)
        # Also when it is closed: a connection the server cut off may not have been given
        # back to the pool yet, and terminating it does that.
        with contextlib.suppress(asyncpg.InterfaceError):  # given back already
            connection.terminate()
        outage = _as_outage(exc, connection_lost=lost)
        if outage is not None:
            raise outage from exc


def _is_closed(connection: Connection) -> bool:
    try:
        return connection.is_closed()
    except asyncpg.InterfaceError:
        # asyncpg takes a connection back from its borrower as soon as it closes.
        return True
