"""asyncpg's own pool beside SQLAlchemy's, for the statements on the hot path.

Every signed-in MCP call looks its access token up, and every refresh grant spends one
token and writes the next pair. Through SQLAlchemy's async layer each of those costs
several hundred microseconds of Python (statement building, cache keys, a greenlet per
call, result wrapping) on top of a round trip that PostgreSQL answers in tens. These few
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

from frontdesk.store.outage import OUTAGE_SQLSTATES

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    # asyncpg's pool of connections that yield its plain records, and one lent by it.
    Pool: TypeAlias = asyncpg.Pool[asyncpg.Record]
    Connection: TypeAlias = PoolConnectionProxy[asyncpg.Record]


class DatabaseUnavailable(ConnectionError):
    """PostgreSQL is down, restarting or refusing connections: answered 503 (store.outage)."""


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

# Every wait is bounded, and each bound ends in DatabaseUnavailable (a 503 the client may
# retry). A hot statement takes a fraction of a millisecond and waits at most for a row
# lock held by another grant's short transaction, so a statement still running after
# COMMAND_SECONDS means a stalled server. ACQUIRE_SECONDS covers queueing for a busy
# connection and opening a new one, CONNECT_SECONDS the opening alone (TCP, TLS, start-up).
CONNECT_SECONDS = 5.0
ACQUIRE_SECONDS = 10.0
COMMAND_SECONDS = 10.0
CLOSE_SECONDS = 5.0
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

    def __init__(self, url: str, max_size: int, session_settings: dict[str, str]) -> None:
        self._dsn = driver_dsn(url)
        self._max_size = max_size
        self._session_settings = session_settings
        self._pool: Pool | None = None
        self._making = asyncio.Lock()
        self._closed = False

    def connection(self) -> Borrowed:
        """``async with pool.connection() as connection:``; a lost, stalled or refused
        server is raised as DatabaseUnavailable."""
        return Borrowed(self)

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
                    timeout=CONNECT_SECONDS,
                    command_timeout=COMMAND_SECONDS,
                    server_settings=self._session_settings,
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
            self._connection = await pool.acquire(timeout=ACQUIRE_SECONDS)
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
