"""Access-token lookups on SQLite: one indexed SELECT, run synchronously on the event loop
through a read-only stdlib ``sqlite3`` connection of this process's own.

Every signed-in MCP call needs its access token's row. Through SQLAlchemy's asyncio
extension on aiosqlite that read is a hop to the connection's thread and back for each of
its statements: it was most of a signed-in call's CPU, and the same SELECT run here
costs a small fraction of that (docs/decisions/hot-sql.md). SQLite sends no
notices, so nothing is kept in memory (as store.access_lookups does on PostgreSQL): every
call reads the row, and so sees every revocation committed by any worker on the same file
before it asked.

Why it may run on the event loop: the database is in WAL mode (store.database), where a
reader never waits for the writer; the statement finds at most one row by its primary key
and two more by theirs, from pages the operating system holds in memory. The connection
waits for no lock (busy timeout 0): when SQLite cannot start the read at once (a
checkpoint resetting the log, recovery after a crash), or fails in any way, ``find``
answers ``UNAVAILABLE`` and the caller reads through the engine instead, whose errors are
rendered as usual (store.outage). The connection sets ``query_only``: it never writes, and
a token's first use is still marked through the engine (store.access_grants).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Final

from sqlalchemy import DateTime
from sqlalchemy.dialects.sqlite import dialect

from frontdesk.store import hot_statements
from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.hot_statements import compiled

# The live token's grant and whether it was used before: the engine's statement
# (store.hot_statements), compiled for the stdlib driver.
FIND_LIVE_ACCESS_GRANT = compiled(
    hot_statements.FIND_LIVE_ACCESS_GRANT, "sqlite", ("token", "tenant", "now")
).text


class Unavailable:
    """The lookup could not be made here; read through the engine instead."""


UNAVAILABLE: Final = Unavailable()

# A lookup's answer: nothing found, the grant and whether the token was used, or UNAVAILABLE.
Found = tuple[AccessRecord, bool] | None | Unavailable


class SqliteAccessReader:
    """A read-only connection to one SQLite file, opened with the first lookup (in the
    process that makes it: each worker has its own) and reopened after a failure."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None
        # Timestamps are compared as the text SQLAlchemy stores them as (the storage
        # format of its SQLite DATETIME), so "now" is bound by the columns' own type.
        sqlite = dialect()
        timestamp = DateTime(timezone=True).dialect_impl(sqlite).bind_processor(sqlite)
        if timestamp is None:
            raise RuntimeError("SQLAlchemy's SQLite DateTime has no bind processor")
        self._timestamp = timestamp

    def find(self, token_hash: str, tenant_key: str, now: datetime) -> Found:
        try:
            connection = self._connection or self._open()
            # fetchall steps the statement to its end, which ends its read transaction: a
            # transaction left open would keep this connection on an old snapshot.
            rows = connection.execute(
                FIND_LIVE_ACCESS_GRANT, (token_hash, tenant_key, self._timestamp(now))
            ).fetchall()
        except sqlite3.Error as error:
            if getattr(error, "sqlite_errorcode", None) not in (
                sqlite3.SQLITE_BUSY,
                sqlite3.SQLITE_LOCKED,
            ):
                # Anything but a lock met may be a broken connection: start afresh.
                self.close()
            return UNAVAILABLE
        if not rows:
            return None
        row = rows[0]
        client_id, scope, resource, subject, email, name, email_verified, snapshot, used = row
        # SQLite hands a boolean back as 0 or 1.
        grant = AccessRecord(
            client_id, scope, resource, subject, email, name, bool(email_verified), snapshot
        )
        return grant, bool(used)

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: no transaction is begun around a SELECT; each statement
        # reads the newest committed state. check_same_thread=False: opened and closed
        # from the event loop's thread, but a test's loop may not be the first one.
        # mode=rw: a file that is not there is not created (the engine made the real one).
        connection = sqlite3.connect(
            f"{Path(self._path).absolute().as_uri()}?mode=rw",
            uri=True,
            timeout=0.0,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            connection.execute("PRAGMA query_only=ON")
        except sqlite3.Error:
            connection.close()
            raise
        self._connection = connection
        return connection

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
