"""The periodic purge (frontdesk.store.purging): it runs again and again in the background of a
serving worker, survives a failed run, and lets one purge at a time do the work."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import OperationalError
from structlog.typing import EventDict

from frontdesk.app import create_app
from frontdesk.config import Settings
from frontdesk.store import purging, retention
from frontdesk.store.database import Database
from frontdesk.store.purging import PeriodicPurge
from frontdesk.store.retention import PurgeReport
from frontdesk.store.tables import audit_events
from tests.support.logs import captured_logs

pytestmark = pytest.mark.anyio

DEADLINE = 10.0


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EventDict]]:
    """What the purge logs during the test."""
    with captured_logs(monkeypatch, purging) as logs:
        yield logs


@pytest.fixture
async def database(empty_database_url: str) -> AsyncIterator[Database]:
    """A database on each backend, not migrated yet."""
    database = Database(empty_database_url)
    try:
        yield database
    finally:
        await database.close()


async def within_deadline(event: asyncio.Event) -> None:
    with anyio.fail_after(DEADLINE):
        await event.wait()


def failures(logs: list[EventDict]) -> list[EventDict]:
    return [entry for entry in logs if entry["event"] == "purge_failed"]


async def test_the_purge_runs_again_and_again_until_stopped() -> None:
    """With a short interval it runs repeatedly; once stopped, never again."""
    runs: list[datetime] = []
    third = asyncio.Event()

    async def run() -> PurgeReport | None:
        runs.append(datetime.now(UTC))
        if len(runs) == 3:
            third.set()
        return None

    periodic = PeriodicPurge(run, interval=0.01)
    periodic.start()
    await within_deadline(third)
    await periodic.stop()
    stopped_at = len(runs)
    # Not a wait for something to happen: five intervals in which a purge still running
    # would have run again; no event marks a run that never comes.
    await asyncio.sleep(0.05)
    assert len(runs) == stopped_at


async def test_a_failed_run_is_logged_once_and_the_next_one_runs(
    logged: list[EventDict],
) -> None:
    """A database error is one warning naming its type, and the task carries on."""
    outcomes: list[str] = []
    ran_twice = asyncio.Event()

    async def run() -> PurgeReport | None:
        if not outcomes:
            outcomes.append("failed")
            raise OperationalError("DELETE ...", {}, ConnectionRefusedError())
        outcomes.append("ran")
        if outcomes.count("ran") == 2:
            ran_twice.set()
        return None

    periodic = PeriodicPurge(run, interval=0.01)
    periodic.start()
    try:
        await within_deadline(ran_twice)
    finally:
        await periodic.stop()
    assert failures(logged) == [
        {"event": "purge_failed", "error": "OperationalError", "log_level": "warning"}
    ]


async def test_a_run_on_a_broken_database_fails_quietly_and_recovers(
    database: Database, make_settings: Callable[..., Settings], logged: list[EventDict]
) -> None:
    """Its tables missing, a run is a logged failure; migrated, the next one purges."""
    periodic = PeriodicPurge.for_database(database, make_settings())
    await periodic.run_once()
    assert len(failures(logged)) == 1

    await database.migrate()
    async with database.engine.begin() as connection:
        await connection.execute(
            insert(audit_events).values(
                tenant_key="initech",
                occurred_at=datetime.now(UTC) - timedelta(days=500),
                event="client_registered",
                detail={},
            )
        )
    await periodic.run_once()

    assert len(failures(logged)) == 1
    assert next(entry for entry in logged if entry["event"] == "purged")["audit_events"] == 1


async def test_one_purge_at_a_time(database: Database) -> None:
    """While one holds the purge lock (PostgreSQL's advisory lock, or a file's beside a
    SQLite database) another is told to skip its turn; released, it can be taken again."""
    async with (
        purging._one_at_a_time(database) as first,
        purging._one_at_a_time(database) as second,
    ):
        assert first
        assert not second
    async with purging._one_at_a_time(database) as again:
        assert again


async def test_a_skipped_turn_purges_nothing(
    database: Database, make_settings: Callable[..., Settings], logged: list[EventDict]
) -> None:
    """A run that finds another purging does nothing and logs nothing."""
    await database.migrate()
    periodic = PeriodicPurge.for_database(database, make_settings())
    async with purging._one_at_a_time(database):
        await periodic.run_once()
    assert logged == []


async def test_serving_runs_the_purge_in_the_background(
    database_url: str, make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The application's lifespan starts the periodic purge and stops it."""
    monkeypatch.setattr(purging, "JITTER", (0.01, 0.01))
    purged = asyncio.Event()
    real_purge = retention.purge

    async def purge(*args: Any, **kwargs: Any) -> PurgeReport:
        report = await real_purge(*args, **kwargs)
        if report.counts["audit_events"]:
            purged.set()
        return report

    monkeypatch.setattr(retention, "purge", purge)
    settings = make_settings(database_url=database_url, purge_interval_seconds=1)
    app = create_app(settings)
    database = app.services.database
    async with lifespan(app):
        async with database.engine.begin() as connection:
            await connection.execute(
                insert(audit_events).values(
                    tenant_key="initech",
                    occurred_at=datetime.now(UTC) - timedelta(days=500),
                    event="client_registered",
                    detail={},
                )
            )
        await within_deadline(purged)
        query = select(func.count()).select_from(audit_events)
        async with database.engine.connect() as connection:
            assert (await connection.execute(query)).scalar_one() == 0


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """The ASGI lifespan an HTTP server runs around serving, driven by hand."""
    received: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    task = asyncio.create_task(app(scope, received.get, sent.put))
    await received.put({"type": "lifespan.startup"})
    with anyio.fail_after(DEADLINE):
        assert (await sent.get())["type"] == "lifespan.startup.complete"
    try:
        yield
    finally:
        await received.put({"type": "lifespan.shutdown"})
        with anyio.fail_after(DEADLINE):
            assert (await sent.get())["type"] == "lifespan.shutdown.complete"
            await task
