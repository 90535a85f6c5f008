"""Databases at the newest schema, migrated once per test session and copied per test.

Running the whole Alembic chain costs tens of milliseconds per database and hundreds of
tests start an application on a fresh one; copying a migrated SQLite file costs a fraction
of a millisecond, and PostgreSQL copies a database from a template itself
(``CREATE DATABASE ... TEMPLATE``, https://www.postgresql.org/docs/15/manage-ag-templatedbs.html).
An application started on such a copy finds its migration step has nothing to do.

The templates are named by the migrations they hold (a digest of the migration scripts),
so a new or edited migration builds a new template; PostgreSQL's also carry a random part,
so that test sessions running at the same time never share, drop or copy each other's.
The tests of migrations themselves take the empty databases (``empty_sqlite_url``,
``empty_postgres_url`` in tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from frontdesk.store.database import MIGRATIONS, Database


def migrations_digest() -> str:
    """A short digest of every migration script and the environment that runs them."""
    digest = hashlib.sha256()
    for script in sorted(MIGRATIONS.rglob("*.py")):
        digest.update(script.relative_to(MIGRATIONS).as_posix().encode())
        digest.update(script.read_bytes())
    return digest.hexdigest()[:12]


async def _migrate(url: str) -> None:
    database = Database(url)
    try:
        await database.migrate()
    finally:
        await database.close()


class SqliteTemplate:
    """One migrated SQLite file in ``folder``; ``copy_to`` gives each test its own copy."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / f"template-{migrations_digest()}.db"
        if not self.path.exists():
            asyncio.run(_migrate(f"sqlite+aiosqlite:///{self.path}"))

    def copy_to(self, destination: Path) -> Path:
        shutil.copyfile(self.path, destination)
        return destination


async def execute_as_admin(admin_url: str, *statements: str) -> None:
    """Run ``statements`` on the server at ``admin_url`` outside a transaction (CREATE and
    DROP DATABASE cannot run inside one)."""
    admin = create_async_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            for statement in statements:
                await connection.execute(text(statement))
    finally:
        await admin.dispose()


def url_of(admin_url: str, name: str) -> str:
    """The URL of the database ``name`` on the server at ``admin_url``."""
    return admin_url.rsplit("/", 1)[0] + "/" + name


class PostgresTemplate:
    """One migrated database on the server at ``admin_url``, copied per test and dropped
    when the session ends."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.name = f"frontdesk_template_{migrations_digest()}_{uuid.uuid4().hex[:8]}"
        # Dropping a test's database takes the server a tenth of a second or more; done on
        # a thread of its own, the next test need not wait for it.
        self._drops = ThreadPoolExecutor(max_workers=1, thread_name_prefix="drop-databases")
        self._dropping: list[Future[None]] = []
        asyncio.run(self._create())

    def url_of(self, name: str) -> str:
        return url_of(self.admin_url, name)

    async def _execute(self, *statements: str) -> None:
        await execute_as_admin(self.admin_url, *statements)

    async def _create(self) -> None:
        await self._execute(f'CREATE DATABASE "{self.name}"')
        try:
            await _migrate(self.url_of(self.name))
            # No connection may be open on a template while it is copied; refusing them
            # keeps a stray one from failing every later copy.
            await self._execute(
                f'ALTER DATABASE "{self.name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false'
            )
        except BaseException:
            await self._execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            raise

    async def copy(self, name: str) -> str:
        """A new database ``name`` holding the template's schema; its URL."""
        await self._execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.name}"')
        return self.url_of(name)

    def discard(self, name: str) -> None:
        """Drop the database ``name`` (made by ``copy``) in the background."""
        statement = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        self._dropping.append(self._drops.submit(asyncio.run, self._execute(statement)))

    def drop(self) -> None:
        """Once every discarded database is gone, the template; a failed drop is raised
        here, so that a database left behind does not go unnoticed."""
        self._drops.shutdown(wait=True)
        failures = [error for future in self._dropping if (error := future.exception())]
        asyncio.run(
            self._execute(
                f'ALTER DATABASE "{self.name}" WITH IS_TEMPLATE false',
                f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)',
            )
        )
        if failures:
            raise failures[0]
