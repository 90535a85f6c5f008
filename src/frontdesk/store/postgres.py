"""A plain asyncpg pool beside SQLAlchemy's, for the statements on the hot path.

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
from collections import deque
from types import TracebackType

import asyncpg
from sqlalchemy.engine import make_url

from frontdesk.store.outage import OUTAGE_SQLSTATES


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

    ``connection_lost``: the connection the error came from is closed, so an interface
    error ("connection is closed") is the server gone, not a bug.
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
# table was small, a plan kept its sequential scan once the table had grown: a primary-key
# lookup went from 0.14 to 3.8 ms, the batched access-token lookup from 0.3 to 20 ms.
# Each pool's sessions are set so that cannot happen:
#
# Statements that find rows by key (the refresh grant's) keep their generic plans, which
# spare the server a planning per run, with sequential scans ruled out: every table they
# read is reached through a key, whatever its size when the plan was made.
KEYED_STATEMENTS = {"enable_seqscan": "off"}
# The batched lookup (a list of keys) is planned again on every run, which costs the
# server a fraction of a millisecond once per batch: ruling out sequential scans was not
# enough to keep its generic plan from going stale.
PLANNED_PER_RUN = {"plan_cache_mode": "force_custom_plan"}


class DriverPool:
    """Up to ``max_size`` asyncpg connections, each lent to one statement at a time.

    Smaller than asyncpg's own pool because it does less: these statements change no
    session state, so a connection goes back without a reset query, and lending and
    returning one are a list pop and append (asyncpg's release runs in a shielded task of
    its own). Connections open on demand (none in a process that never runs a hot
    statement), and more only while borrowers queue for the busy ones. A connection whose
    statement raised is closed rather than lent again, since it may be midway through the
    exchange.
    """

    # A statement takes a fraction of a millisecond and opening a connection several, and
    # each open connection holds memory here and a backend process on the server: a busy
    # connection is waited for until this many borrowers queue per open connection.
    WAITERS_BEFORE_GROWING = 4

    def __init__(self, url: str, max_size: int, session_settings: dict[str, str]) -> None:
        self._dsn = driver_dsn(url)
        self._max_size = max_size
        self._session_settings = session_settings
        self._idle: list[asyncpg.Connection] = []
        # Connections open, lent out or being opened: never more than max_size.
        self._slots_taken = 0
        # Borrowers waiting for a connection; a waiter woken with None owns a free slot
        # and opens a connection of its own.
        self._waiters: deque[asyncio.Future[asyncpg.Connection | None]] = deque()
        self._closed = False

    def connection(self) -> Borrowed:
        """``async with pool.connection() as connection:``; a lost or refused server is
        raised as DatabaseUnavailable."""
        return Borrowed(self)

    async def _acquire(self) -> asyncpg.Connection:
        if self._closed:
            raise DatabaseUnavailable("the connection pool is closed")
        while self._idle:
            connection = self._idle.pop()
            if not connection.is_closed():
                return connection
            self._slots_taken -= 1
        if self._slots_taken < self._max_size and (
            len(self._waiters) >= self._slots_taken * self.WAITERS_BEFORE_GROWING
        ):
            self._slots_taken += 1
            return await self._open()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            connection = await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # Handed a connection (or a slot) just as the wait was cancelled: pass it on.
                self._give_back(waiter.result())
            raise
        return connection if connection is not None else await self._open()

    async def _open(self) -> asyncpg.Connection:
        """Open a connection into a slot already taken; the slot is freed if that fails."""
        try:
            return await asyncpg.connect(self._dsn, server_settings=self._session_settings)
        except BaseException:
            self._give_back(None)
            raise

    def _release(self, connection: asyncpg.Connection, error: BaseException | None) -> None:
        # Lent again only after a statement that ended cleanly: after any error, even one
        # the server sent, asyncpg may still be midway through the exchange (during a
        # server shutdown it is), and the next borrower would find "another operation is
        # in progress". These statements fail rarely enough that a reconnect is cheap.
        if self._closed or error is not None or connection.is_closed():
            connection.terminate()
            self._give_back(None)
            return
        self._give_back(connection)

    def _give_back(self, connection: asyncpg.Connection | None) -> None:
        """Hand a connection, or the slot of one closed, to the first waiter still waiting."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        if connection is None:
            self._slots_taken -= 1
        else:
            self._idle.append(connection)

    async def close(self) -> None:
        self._closed = True
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(DatabaseUnavailable("the connection pool is closed"))
        idle, self._idle = self._idle, []
        for connection in idle:
            self._slots_taken -= 1
            with contextlib.suppress(Exception):
                await connection.close(timeout=5)


class Borrowed:
    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: DriverPool) -> None:
        self._pool = pool
        self._connection: asyncpg.Connection | None = None

    async def __aenter__(self) -> asyncpg.Connection:
        try:
            self._connection = await self._pool._acquire()
        except Exception as error:
            outage = _as_outage(error)
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
        lost = False
        if self._connection is not None:
            connection, self._connection = self._connection, None
            lost = connection.is_closed()
            self._pool._release(connection, exc)
        if exc is not None:
            outage = _as_outage(exc, connection_lost=lost)
            if outage is not None:
                raise outage from exc
