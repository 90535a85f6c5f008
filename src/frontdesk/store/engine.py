"""The repositories' async engine: SQLAlchemy's own engine, driven from asyncio.

SQLAlchemy's asyncio extension (``sqlalchemy.ext.asyncio``) imports its ORM session
classes, and with them the whole ORM: 6 MB of every worker's memory for a part Frontdesk
never uses (measured on a loaded worker, 78.5 → 72.4 MB). What the extension does for an
engine is thin: each call runs the synchronous engine's code through ``greenlet_spawn``,
so that the async driver's awaits (asyncpg, aiosqlite) can suspend it. This module does
the same for the four things the store does: begin a transaction, connect, execute, and
run a synchronous function (migrations). Everything below it, the statement compiler, the
pool, the dialects and their drivers, is SQLAlchemy's, unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Concatenate, ParamSpec, TypeVar, TypeVarTuple, overload

from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, CursorResult, Dialect, Engine
from sqlalchemy.sql import Executable
from sqlalchemy.sql.selectable import TypedReturnsRows
from sqlalchemy.util.concurrency import greenlet_spawn

P = ParamSpec("P")
T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class AsyncConnection:
    """One pooled connection; lent by ``AsyncEngine.connect`` or ``begin``."""

    __slots__ = ("sync_connection",)

    def __init__(self, sync_connection: Connection) -> None:
        self.sync_connection = sync_connection

    # Typed as SQLAlchemy types its own: a select's result rows carry its column types.
    @overload
    async def execute(
        self, statement: TypedReturnsRows[*Ts], parameters: Any = None
    ) -> CursorResult[*Ts]: ...

    @overload
    async def execute(
        self, statement: Executable, parameters: Any = None
    ) -> CursorResult[*tuple[Any, ...]]: ...

    async def execute(
        self, statement: Executable, parameters: Any = None
    ) -> CursorResult[*tuple[Any, ...]]:
        """Run a statement; its rows are already fetched (async drivers buffer them)."""
        return await greenlet_spawn(self.sync_connection.execute, statement, parameters)

    async def run_sync(
        self, function: Callable[Concatenate[Connection, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Call a synchronous function with the synchronous connection (Alembic's way in)."""
        return await greenlet_spawn(partial(function, self.sync_connection, *args, **kwargs))

    async def commit(self) -> None:
        await greenlet_spawn(self.sync_connection.commit)


class AsyncEngine:
    __slots__ = ("sync_engine",)

    def __init__(self, sync_engine: Engine) -> None:
        if not sync_engine.dialect.is_async:
            raise ValueError(f"{sync_engine.dialect.name} is not an asyncio driver here")
        self.sync_engine = sync_engine

    @property
    def dialect(self) -> Dialect:
        return self.sync_engine.dialect

    def execution_options(self, **options: Any) -> AsyncEngine:
        """The same pool, with these options on every connection it lends."""
        return AsyncEngine(self.sync_engine.execution_options(**options))

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        """A connection; whatever it left uncommitted is rolled back when it returns."""
        sync_connection = await greenlet_spawn(self.sync_engine.connect)
        try:
            yield AsyncConnection(sync_connection)
        finally:
            await greenlet_spawn(sync_connection.close)

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        """A connection in a transaction, committed when the block ends normally and rolled
        back when it raises."""
        sync_connection = await greenlet_spawn(self.sync_engine.connect)
        try:
            transaction = await greenlet_spawn(sync_connection.begin)
            try:
                yield AsyncConnection(sync_connection)
            except BaseException:
                await greenlet_spawn(transaction.rollback)
                raise
            await greenlet_spawn(transaction.commit)
        finally:
            await greenlet_spawn(sync_connection.close)

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await greenlet_spawn(self.sync_engine.dispose)


def create_async_engine(url: str, **options: Any) -> AsyncEngine:
    """An engine for an asyncio driver (``postgresql+asyncpg``, ``sqlite+aiosqlite``),
    made as SQLAlchemy's extension makes one: the synchronous engine, with its dialect
    told that the driver is async."""
    return AsyncEngine(create_engine(url, _is_async=True, **options))
