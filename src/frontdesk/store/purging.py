"""Running the retention purge (store.retention): once, from ``frontdesk purge``, and
periodically in every serving worker.

Periodic runs are background work of the worker's event loop, never inside a request. Many
workers and instances each run one; on PostgreSQL a session-level advisory lock lets one at
a time do the work and the others skip their turn, on a SQLite file an exclusive lock on a
file beside the database does the same for the workers of its one host. A skipped or
failed run changes nothing: every delete is idempotent and the next run takes up the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime

import structlog
from sqlalchemy import text
from sqlalchemy.engine import make_url

from frontdesk.config import Settings
from frontdesk.store import retention
from frontdesk.store.database import Database
from frontdesk.store.retention import PurgeReport, RetentionPolicy

log = structlog.get_logger(__name__)

# How long one periodic run may delete before it leaves the rest to the next; the hard bound
# also cancels a statement that hangs past it (a stalled database).
RUN_SECONDS = 30.0
HARD_BOUND_SECONDS = RUN_SECONDS + 30.0
# Each wait is the interval times a factor drawn from this range, so that workers started
# together do not purge together, and an instance restarted more often than the interval
# still purges now and then.
JITTER = (0.5, 1.5)
# pg_try_advisory_lock's key: any constant that no other user of the database takes.
ADVISORY_LOCK_KEY = 0x46445F5055524745  # "FD_PURGE"


def policy_of(settings: Settings) -> RetentionPolicy:
    return RetentionPolicy(
        unused_client_days=settings.unused_client_days,
        audit_retention_days=settings.audit_retention_days,
        usage_retention_days=settings.usage_retention_days,
    )


async def purge_now(settings: Settings, *, dry_run: bool = False) -> PurgeReport:
    """One purge of the database ``serve`` uses (``frontdesk purge``), to the end."""
    database = Database(settings.database_url)
    try:
        if settings.auto_migrate:
            await database.migrate()
        now = datetime.now(UTC)
        if dry_run:
            return await retention.count(database.engine, policy_of(settings), now)
        return await retention.purge(database.engine, policy_of(settings), now)
    finally:
        await database.close()


Run = Callable[[], Awaitable[PurgeReport | None]]


class PeriodicPurge:
    """A task that runs ``run`` every ``interval`` seconds (jittered) until stopped."""

    def __init__(self, run: Run, interval: float) -> None:
        self._run = run
        self._interval = interval
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_database(cls, database: Database, settings: Settings) -> PeriodicPurge:
        policy = policy_of(settings)

        async def run() -> PurgeReport | None:
            async with _one_at_a_time(database) as mine:
                if not mine:
                    return None
                deadline = time.monotonic() + RUN_SECONDS
                return await retention.purge(
                    database.engine, policy, datetime.now(UTC), deadline=deadline
                )

        return cls(run, settings.purge_interval_seconds)

    def start(self) -> None:
        if self._interval > 0 and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="frontdesk-purge")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval * random.uniform(*JITTER))  # noqa: S311 -- spreading, not secrecy
            await self.run_once()

    async def run_once(self) -> None:
        """One run, bounded in time; a failure is logged (once per run) and never raised."""
        try:
            async with asyncio.timeout(HARD_BOUND_SECONDS):
                report = await self._run()
        except Exception as error:
            # The type only: a database error's text may quote the statement.
            log.warning("purge_failed", error=type(error).__name__)
            return
        if report is not None and any(report.counts.values()):
            log.info("purged", complete=report.complete, **report.counts)


@contextlib.asynccontextmanager
async def _one_at_a_time(database: Database) -> AsyncIterator[bool]:
    """Whether this worker holds the purge lock; held for the block."""
    if database.backend == "postgresql":
        async with _advisory_lock(database) as held:
            yield held
        return
    parsed = make_url(database.url)
    if not parsed.database or parsed.database == ":memory:" or parsed.query:
        # A database only this process can open.
        yield True
        return
    with _file_lock(f"{parsed.database}.purge-lock") as held:
        yield held


@contextlib.asynccontextmanager
async def _advisory_lock(database: Database) -> AsyncIterator[bool]:
    # Session-level, so it outlives each batch's transaction; the connection is the session,
    # kept for the whole run and closed, rather than returned to the pool, if the unlock
    # fails: a lock left on a pooled session would hold every other instance off.
    connection = await database.engine.connect()
    try:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        held = bool(
            (
                await connection.execute(
                    text("SELECT pg_try_advisory_lock(:key)"), {"key": ADVISORY_LOCK_KEY}
                )
            ).scalar_one()
        )
        try:
            yield held
        finally:
            if held:
                try:
                    await connection.execute(
                        text("SELECT pg_advisory_unlock(:key)"), {"key": ADVISORY_LOCK_KEY}
                    )
                except BaseException:
                    await connection.invalidate()
                    raise
    finally:
        await connection.close()


@contextlib.contextmanager
def _file_lock(path: str) -> Iterator[bool]:
    # flock conflicts between open files, so between the workers of this host and between
    # tasks of one process alike; closing the file releases it, as does the process's end.
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            held = False
        yield held
    finally:
        os.close(descriptor)
