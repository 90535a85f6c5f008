"""The database connection: engine set-up per backend, migrations and the readiness probe."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, text
from sqlalchemy.engine import Connection, ExceptionContext, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from frontdesk.store.bounds import Timeouts

if TYPE_CHECKING:
    from frontdesk.store.change_feed import ChangeFeed
    from frontdesk.store.postgres import AsyncpgPool
    from frontdesk.store.sqlite_lookups import SqliteAccessReader

MIGRATIONS = Path(__file__).with_name("migrations")

# SQLite connections a process keeps, and never more: aiosqlite runs each connection in a
# thread of its own. SQLAlchemy's default (5, plus 10 overflow connections closed as soon as
# they are returned) opened a connection, a thread and a page cache for nearly every burst
# of 32 concurrent signed-in calls (some 75 threads in 5 s of load); the new threads left
# malloc arenas behind, megabytes of a worker's RSS, for no throughput: the event loop is
# the bottleneck of a worker, and SQLite lets one writer in at a time anyway (figures:
# docs/decisions/memory.md). A call waits
# for a connection instead, at most Timeouts.acquire seconds (then 503, store.outage).
# Every repository method holds one connection at a time, so waiting cannot deadlock.
SQLITE_CONNECTIONS = 5


def _sqlite_pragmas(timeouts: Timeouts, dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers go on while a write commits; busy_timeout makes concurrent
    # writers wait their turn instead of failing at once, for at most a statement's bound:
    # a lock held longer (SQLite's form of a stall) is "database is locked", a 503.
    busy_ms = max(1, round(timeouts.statement * 1000))
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _cut_off_when_abandoned(context: ExceptionContext) -> None:
    """A statement that ran out of time, or whose caller was cancelled (a /readyz past its
    bound, a client gone), leaves its connection midway through an exchange with a server
    that may never answer: it is cut off at once and not lent again. SQLAlchemy would first
    try a graceful close, which waits for that server. The pool's other connections stay:
    each is bounded in the same way when next used, and fine again once the server is."""
    error = context.original_exception
    if isinstance(error, TimeoutError):
        context.is_disconnect = True
        context.invalidate_pool_on_disconnect = False
    elif not context.is_disconnect:
        return
    connection = context.connection
    if connection is None or connection.invalidated or connection.closed:
        return
    with contextlib.suppress(Exception):
        # asyncpg's terminate: the socket closed, nothing awaited; the close SQLAlchemy then
        # tries finds the connection closed already.
        driver = connection.connection.driver_connection
        if driver is not None:
            driver.terminate()


def create_engine(url: str, pool_size: int = 20, timeouts: Timeouts | None = None) -> AsyncEngine:
    """An engine whose every wait is bounded by ``timeouts`` (store.bounds' defaults if
    None)."""
    timeouts = timeouts or Timeouts()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
            engine = create_async_engine(
                url, pool_size=SQLITE_CONNECTIONS, max_overflow=0, pool_timeout=timeouts.acquire
            )
        else:
            # In memory: SQLAlchemy keeps the one connection that holds the database.
            engine = create_async_engine(url)
        event.listen(engine.sync_engine, "connect", functools.partial(_sqlite_pragmas, timeouts))
        return engine
    # No pre-ping: it costs a round trip on every checkout. A connection that died (a
    # database restart) fails its next statement instead; that is answered 503
    # (store.outage) and SQLAlchemy then replaces the whole pool. Overflow connections are
    # closed when returned, so the pool holds what a busy worker keeps in use at once.
    # Statements are planned per run, like the batched lookup (store.postgres.PLANNED_PER_RUN
    # says why): a code or client lookup must not keep a plan made when its table was empty.
    # Every wait is bounded (store.bounds): asyncpg's connect and command timeouts, the
    # pool's checkout, closing a connection, and the server's own statement and
    # idle-transaction timeouts.
    from frontdesk.store.postgres import BoundedCloseConnection

    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_recycle=1800,
        pool_timeout=timeouts.acquire,
        connect_args={
            "connection_class": BoundedCloseConnection,
            "timeout": timeouts.connect,
            "command_timeout": timeouts.statement,
            "server_settings": {
                "plan_cache_mode": "force_custom_plan",
                **timeouts.server_settings(),
            },
        },
    )
    event.listen(engine.sync_engine, "handle_error", _cut_off_when_abandoned)
    return engine


def _migration_engine(url: str) -> AsyncEngine:
    """PostgreSQL without the statement bounds: a migration may rewrite a large table or
    build an index, which takes as long as it takes; opening the connection stays bounded."""
    return create_async_engine(
        url, poolclass=NullPool, connect_args={"timeout": Timeouts().connect}
    )


def for_reads(engine: AsyncEngine) -> AsyncEngine:
    """The same pool, without a transaction around each read.

    A single SELECT needs no BEGIN and ROLLBACK around it: on PostgreSQL that saves two
    round trips on every read that goes through SQLAlchemy.
    """
    return engine.execution_options(isolation_level="AUTOCOMMIT")


class Database:
    """One engine per process, shared by every repository; on PostgreSQL also asyncpg's
    pools for the hot statements (store.postgres), on a SQLite file a synchronous reader
    for the access-token lookup (store.sqlite_lookups)."""

    def __init__(self, url: str, pool_size: int = 20, timeouts: Timeouts | None = None) -> None:
        self.url = url
        self.timeouts = timeouts = timeouts or Timeouts()
        self.driver_pool: AsyncpgPool | None = None
        self.lookup_pool: AsyncpgPool | None = None
        self.grant_changes: ChangeFeed | None = None
        self.access_reader: SqliteAccessReader | None = None
        parsed = make_url(url)
        backend, file = parsed.get_backend_name(), parsed.database
        # A file named by its path, which another connection can open: not a database in
        # memory (the engine's one connection holds it), nor one opened with options in the
        # URL's query (a "file:" URI among them). Those are read through the engine only.
        if backend == "sqlite" and file and file != ":memory:" and not parsed.query:
            from frontdesk.store.sqlite_lookups import SqliteAccessReader

            self.access_reader = SqliteAccessReader(file)
        if backend == "postgresql":
            from frontdesk.store.change_feed import ChangeFeed
            from frontdesk.store.postgres import KEYED_STATEMENTS, PLANNED_PER_RUN, AsyncpgPool

            # The refresh grant's statements get the pool's full size; the batched token
            # lookups (one statement per batch) and SQLAlchemy (sign-ins, registrations,
            # revocations) a quarter each. Connections open only as they are needed.
            self.driver_pool = AsyncpgPool(url, pool_size, KEYED_STATEMENTS, timeouts)
            pool_size = max(2, pool_size // 4)
            self.lookup_pool = AsyncpgPool(url, pool_size, PLANNED_PER_RUN, timeouts)
            # One listening session, opened with the first signed-in call.
            self.grant_changes = ChangeFeed(url, timeouts)
        self.engine = create_engine(url, pool_size, timeouts)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    async def migrate(self) -> tuple[str, ...]:
        """Bring the schema to the newest revision; safe to run on every start. Returns
        the migrations applied, oldest first, by file name (``0008_consents``): none when
        the schema was current."""
        if self.backend != "postgresql":
            # SQLite: through the engine, whose one connection may hold the database.
            async with self.engine.begin() as connection:
                return await connection.run_sync(_upgrade_to_head)
        engine = _migration_engine(self.url)
        try:
            async with engine.begin() as connection:
                return await connection.run_sync(_upgrade_to_head)
        finally:
            await engine.dispose()

    async def ping(self) -> None:
        async with self.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))

    async def close(self) -> None:
        if self.access_reader is not None:
            self.access_reader.close()
        if self.grant_changes is not None:
            await self.grant_changes.close()
        for pool in (self.driver_pool, self.lookup_pool):
            if pool is not None:
                await pool.close()
        await self.engine.dispose()


def _upgrade_to_head(connection: Connection) -> tuple[str, ...]:
    # Imported here: Alembic is needed where migrations run, not by serving workers.
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    before = MigrationContext.configure(connection).get_current_revision()
    command.upgrade(config, "head")
    # Read in the same transaction as the upgrade, so they are the migrations it applied.
    pending = ScriptDirectory.from_config(config).iterate_revisions("head", before or "base")
    return tuple(Path(script.path).stem for script in reversed(list(pending)))
