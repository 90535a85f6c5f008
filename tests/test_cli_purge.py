"""`frontdesk purge`: one purge now, against the database `serve` uses, with its counts;
`--dry-run` counts and deletes nothing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, insert, select

from frontdesk.cli.main import main
from frontdesk.store import retention
from frontdesk.store.database import Database
from frontdesk.store.tables import audit_events, spent_flows


@pytest.fixture(autouse=True)
def database_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A fresh SQLite file, named the way `serve` is told: FRONTDESK_DATABASE_URL."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", url)
    return url


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def add_old_rows(url: str) -> None:
    """Two spent flows past their time, and an audit event older than its retention."""

    async def add() -> None:
        database = Database(url)
        try:
            await database.migrate()
            async with database.engine.begin() as connection:
                past = datetime.now(UTC) - timedelta(days=500)
                await connection.execute(
                    insert(spent_flows),
                    [
                        {"flow_hash": f"{n:064x}", "tenant_key": "initech", "expires_at": past}
                        for n in range(2)
                    ],
                )
                await connection.execute(
                    insert(audit_events).values(
                        tenant_key="initech", occurred_at=past, event="client_registered", detail={}
                    )
                )
        finally:
            await database.close()

    asyncio.run(add())


def stored(url: str) -> tuple[int, int]:
    """How many spent flows and audit events the database holds."""

    async def read() -> tuple[int, int]:
        database = Database(url)
        try:
            async with database.engine.connect() as connection:
                counts = [
                    int(
                        (
                            await connection.execute(select(func.count()).select_from(table))
                        ).scalar_one()
                    )
                    for table in (spent_flows, audit_events)
                ]
        finally:
            await database.close()
        return counts[0], counts[1]

    return asyncio.run(read())


def test_purge_deletes_and_prints_the_count_per_kind(database_file: str) -> None:
    """Every kind is listed with what went; the rows are gone."""
    add_old_rows(database_file)

    result = run("purge")

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "spent_flows: 2" in lines
    assert "audit_events: 1" in lines
    assert "authorization_codes: 0" in lines
    assert "tool_usage: 0" in lines
    assert len(lines) == len(retention.KINDS)
    assert stored(database_file) == (0, 0)


def test_a_dry_run_counts_and_deletes_nothing(database_file: str) -> None:
    """--dry-run prints the same counts, says so, and leaves every row."""
    add_old_rows(database_file)

    result = run("purge", "--dry-run")

    assert result.exit_code == 0, result.output
    assert "spent_flows: 2" in result.output.splitlines()
    assert result.output.splitlines()[-1] == "dry run: nothing was deleted"
    assert stored(database_file) == (2, 1)


def test_audit_retention_days_is_read_from_the_environment(
    database_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FRONTDESK_AUDIT_RETENTION_DAYS=0 keeps every audit event."""
    add_old_rows(database_file)
    monkeypatch.setenv("FRONTDESK_AUDIT_RETENTION_DAYS", "0")

    result = run("purge")

    assert result.exit_code == 0, result.output
    assert "audit_events: 0" in result.output.splitlines()
    assert stored(database_file) == (0, 1)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FRONTDESK_AUDIT_RETENTION_DAYS", "-1"),
        ("FRONTDESK_UNUSED_CLIENT_DAYS", "3651"),
        ("FRONTDESK_PURGE_INTERVAL_SECONDS", "-5"),
    ],
)
def test_a_retention_setting_out_of_range_is_refused(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each setting is checked before anything is deleted, and the error names it."""
    monkeypatch.setenv(name, value)

    result = run("purge")

    assert result.exit_code != 0
    assert name in result.output
