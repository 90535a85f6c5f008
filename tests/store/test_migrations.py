"""Migrations: safe to run on every start, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from click.testing import CliRunner, Result
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from frontdesk.cli.main import main
from frontdesk.store.database import MIGRATIONS, Database
from frontdesk.store.tables import metadata

# Explicit, so that anyio keeps the database_url parametrization.
pytestmark = pytest.mark.anyio


@pytest.fixture
def database_url(empty_database_url: str) -> str:
    """This module's tests begin where a deployment does: a database without any schema
    (not a copy of the session's migrated template)."""
    return empty_database_url


def head_revision() -> str | None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


def table_names(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


async def schema_of(database: Database) -> tuple[set[str], str | None]:
    async with database.engine.connect() as connection:
        tables = await connection.run_sync(table_names)
        version = (
            await connection.execute(text("SELECT version_num FROM alembic_version"))
        ).scalar()
    return tables, version


async def test_migrating_twice_is_harmless(database_url: str) -> None:
    """A second migrate on an up-to-date database changes nothing and raises nothing."""
    database = Database(database_url)
    try:
        await database.migrate()
        first = await schema_of(database)
        await database.migrate()
        assert await schema_of(database) == first
    finally:
        await database.close()


async def test_migrations_build_every_table_the_code_uses(database_url: str) -> None:
    """After migrating, every table in the SQLAlchemy schema exists, at the newest revision."""
    database = Database(database_url)
    try:
        await database.migrate()
        tables, version = await schema_of(database)
    finally:
        await database.close()
    assert set(metadata.tables) <= tables
    assert version == head_revision()


async def test_two_databases_migrate_from_one_process(database_url: str, tmp_path: Path) -> None:
    """Migrating one database does not leave the next one believing it is up to date."""
    other = Database(f"sqlite+aiosqlite:///{tmp_path / 'other.db'}")
    database = Database(database_url)
    try:
        await database.migrate()
        await other.migrate()
        assert "companies" in (await schema_of(other))[0]
    finally:
        await database.close()
        await other.close()


async def test_a_sqlite_file_in_a_missing_directory_is_created(tmp_path: Path) -> None:
    """The embedded database makes its directory, so a first run needs no set-up."""
    path = tmp_path / "var" / "data" / "frontdesk.db"
    database = Database(f"sqlite+aiosqlite:///{path}")
    try:
        await database.migrate()
    finally:
        await database.close()
    assert path.is_file()


def upgrade(database_url: str) -> Result:
    return CliRunner().invoke(main, ["db", "upgrade"], env={"FRONTDESK_DATABASE_URL": database_url})


async def test_db_upgrade_command_migrates_and_can_run_again(database_url: str) -> None:
    """`frontdesk db upgrade` brings the schema up, and a second run is a no-op."""
    # The command runs its own event loop, so it runs in a thread beside this test's loop.
    outputs = []
    for _ in range(2):
        result = await anyio.to_thread.run_sync(upgrade, database_url)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    # The first run applies every migration (the fixture's database may be a new file or an
    # empty PostgreSQL schema); the second has nothing left to do.
    assert " migrations: 0001_" in outputs[0]
    assert outputs[1] == "database is already up to date\n"
    database = Database(database_url)
    try:
        tables, version = await schema_of(database)
    finally:
        await database.close()
    assert "companies" in tables
    assert version == head_revision()
