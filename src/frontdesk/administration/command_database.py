"""The database a ``frontdesk`` command works on: the one ``serve`` uses
(FRONTDESK_DATABASE_URL, else the settings' default), opened so that a wrong URL is one
clear line and never a new, empty database.

A command that reads or changes what is stored needs the database to exist and its schema
to be current: it never creates a SQLite file, nor migrates, as a side effect (an operator
who ran it beside the service with another working directory got an empty database of
their own, and an empty answer). Only ``companies apply`` and ``db upgrade``, which set a
database up, create and migrate it, and ``apply`` says so when it creates one.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TypeVar

from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from frontdesk.config import Settings
from frontdesk.errors import FrontdeskError
from frontdesk.store.database import MIGRATIONS, Database

T = TypeVar("T")


class DatabaseMissing(FrontdeskError):
    """FRONTDESK_DATABASE_URL names a SQLite file that does not exist."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class DatabaseUnreachable(FrontdeskError):
    """The database could not be connected to, or refused the connection."""


class SchemaNotCurrent(FrontdeskError):
    """The database holds no Frontdesk schema, or one of another migration."""


@dataclass(frozen=True, slots=True)
class Upgraded:
    """What ``db upgrade`` did: whether it created the database (a SQLite file that was
    not there), and the migrations it applied, oldest first."""

    created: bool
    applied: tuple[str, ...]

    def summary(self) -> str:
        """One line an operator reads: what changed, so that creating a database is never
        reported as if it had been there all along."""
        if not self.applied:
            return "database is already up to date"
        count = f"{len(self.applied)} migration{'s' if len(self.applied) > 1 else ''}"
        if self.created:
            return f"created the database and applied {count}: {', '.join(self.applied)}"
        return f"applied {count}: {', '.join(self.applied)}"


class Use(Enum):
    # Read or change what is stored: the database must exist, at the current migration.
    EXISTING = "existing"
    # Set up (companies apply): created when missing, migrated when FRONTDESK_AUTO_MIGRATE.
    SET_UP = "set up"
    # Migrate (db upgrade): created when missing, migrated whatever the settings say.
    UPGRADE = "upgrade"


def shown_url(url: str) -> str:
    """The URL as an error may show it: its password masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(an unreadable URL)"


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names by its path; None for PostgreSQL, a database in memory,
    or one opened with options in its query (a ``file:`` URI), which SQLite opens itself."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.query:
        return None
    if not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


@contextlib.asynccontextmanager
async def opened(
    settings: Settings,
    use: Use = Use.EXISTING,
    notice: Callable[[str], None] | None = None,
    report: Callable[[Upgraded], None] | None = None,
) -> AsyncIterator[Database]:
    """The configured database, checked as ``use`` needs; closed on leaving. ``report``
    is told what migrating it did, when it is migrated."""
    url = settings.database_url
    file = sqlite_file(url)
    missing = file is not None and not file.exists()
    if file is not None and missing:
        if use is Use.EXISTING:
            raise DatabaseMissing(
                f"no database at {file.resolve()} (FRONTDESK_DATABASE_URL={shown_url(url)}):"
                " point FRONTDESK_DATABASE_URL at the database `frontdesk serve` uses, or"
                " create this one with `frontdesk db upgrade`",
                file.resolve(),
            )
        if notice is not None:
            notice(f"creating a new database at {file.resolve()}")
    database = Database(url, settings.database_pool_size)
    try:
        # A database just created is migrated whatever FRONTDESK_AUTO_MIGRATE says: the
        # operator asked for it to be set up.
        if use is Use.UPGRADE or (use is Use.SET_UP and (settings.auto_migrate or missing)):
            applied = await reaching(url, database.migrate())
            if report is not None:
                report(Upgraded(created=missing, applied=applied))
        await _check_schema(database)
        yield database
    finally:
        await database.close()


async def reaching(url: str, step: Awaitable[T]) -> T:
    """``step``, with a failure to connect told in one line."""
    try:
        return await step
    except (OSError, TimeoutError, DBAPIError) as error:
        raise DatabaseUnreachable(
            f"cannot reach the database at {shown_url(url)}: {_reason(error)}"
        ) from None


def _reason(error: BaseException) -> str:
    if isinstance(error, DBAPIError) and error.orig is not None:
        error = error.orig
    if isinstance(error, TimeoutError):
        return "no answer in time"
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def head_revision() -> str:
    """The migration this Frontdesk's schema is at (the newest under store/migrations)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None, "store/migrations holds no migration"
    return head


def _current_revision(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


async def _check_schema(database: Database) -> None:
    async def read() -> str | None:
        async with database.engine.connect() as connection:
            return await connection.run_sync(_current_revision)

    current = await reaching(database.url, read())
    head = head_revision()
    where = shown_url(database.url)
    if current is None:
        raise SchemaNotCurrent(
            f"the database at {where} holds no Frontdesk schema: run `frontdesk db upgrade`"
            " (or `frontdesk serve`, which migrates) first"
        )
    if current != head:
        raise SchemaNotCurrent(
            f"the database at {where} is at migration {current}, this Frontdesk needs {head}:"
            " run `frontdesk db upgrade`"
        )
