"""Every `frontdesk` command uses the database `serve` uses, and a wrong one is one clear
line: a missing SQLite file is never created by a command that reads, an empty database
never migrated by one, and a bad URL or an unreachable server is no traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from frontdesk.cli.main import main
from frontdesk.config import Settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_FILE = ROOT / "tests" / "fixtures" / "companies.yaml"

# Every command that reads or changes what is stored, with the arguments it needs.
COMMANDS = [
    ["companies", "list"],
    ["companies", "show", "acme"],
    ["companies", "apply", "--dry-run", str(FIXTURE_FILE)],
    ["companies", "deactivate", "acme"],
    ["companies", "activate", "acme"],
    ["companies", "delete", "acme", "--yes"],
    ["clients", "list", "acme"],
    ["clients", "revoke", "acme", "some-client"],
    ["grants", "list", "acme"],
    ["grants", "revoke", "acme", "1"],
    ["audit", "list", "acme"],
]


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def test_serve_and_every_command_default_to_the_same_database() -> None:
    """scripts/serve leaves the database to the settings' default, var/frontdesk.db, so a
    command run from the checkout reads the database the service writes."""
    assert Settings().database_url == "sqlite+aiosqlite:///var/frontdesk.db"
    script = (ROOT / "scripts" / "serve").read_text(encoding="utf-8")
    assert "export FRONTDESK_DATABASE_URL" not in script


def test_scripts_serve_leaves_logs_as_json() -> None:
    """The README promises JSON logs; console logs only when FRONTDESK_LOG_JSON=false."""
    script = (ROOT / "scripts" / "serve").read_text(encoding="utf-8")
    assert "export FRONTDESK_LOG_JSON" not in script
    assert Settings().log_json is True


@pytest.mark.parametrize("arguments", COMMANDS)
def test_a_missing_sqlite_file_is_an_error_and_stays_missing(
    arguments: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the default URL in a directory that has no var/frontdesk.db: one line naming the
    file and how to fix it, exit 1, and no file (nor directory) created."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))  # the fixture file's tools: tests.fixtures
    result = run(*arguments)
    if arguments[:2] == ["companies", "apply"]:
        # The dry run says what the real one would do, to a database it would create.
        assert result.exit_code == 0, result.output
        assert "would create it" in result.stderr
    else:
        assert result.exit_code == 1
        missing = tmp_path / "var" / "frontdesk.db"
        assert result.output == (
            f"Error: no database at {missing} (FRONTDESK_DATABASE_URL="
            "sqlite+aiosqlite:///var/frontdesk.db): point FRONTDESK_DATABASE_URL at the"
            " database `frontdesk serve` uses, or create this one with `frontdesk db upgrade`\n"
        )
    assert not (tmp_path / "var").exists()


@pytest.mark.parametrize("arguments", COMMANDS)
def test_an_empty_database_is_not_migrated_by_a_command(
    arguments: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database without Frontdesk's schema: an error that says to run `db upgrade`, and
    the database left as it was."""
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    monkeypatch.syspath_prepend(str(ROOT))
    result = run(*arguments)
    assert result.exit_code == 1
    assert "holds no Frontdesk schema: run `frontdesk db upgrade`" in result.output
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []


def test_apply_creates_a_missing_database_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`companies apply` sets a database up, and names the file it created on stderr."""
    path = tmp_path / "new" / "frontdesk.db"
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    result = run("companies", "apply", str(FIXTURE_FILE))
    assert result.exit_code == 0, result.output
    assert result.stderr == f"warning: creating a new database at {path}\n"
    assert run("companies", "list").exit_code == 0


def test_a_database_other_than_sqlite_or_postgresql_is_a_settings_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mysql:// URL: one line naming the variable and what it accepts, no traceback."""
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", "mysql://frontdesk@db.internal/frontdesk")
    result = run("companies", "list")
    assert result.exit_code == 1
    assert result.output == (
        "Error: invalid settings: FRONTDESK_DATABASE_URL: must be sqlite+aiosqlite:///PATH or"
        " postgresql+asyncpg://USER@HOST/DATABASE, not 'mysql'\n"
    )


def test_an_unreachable_database_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens on port 1: the command says it cannot reach the database, with the
    URL (its password masked), and exits 1."""
    monkeypatch.setenv(
        "FRONTDESK_DATABASE_URL", "postgresql+asyncpg://frontdesk:hunter2@127.0.0.1:1/frontdesk"
    )
    result = run("companies", "list")
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: cannot reach the database at postgresql+asyncpg://frontdesk:***@127.0.0.1:1/"
    )
    assert result.output.count("\n") == 1
    assert "hunter2" not in result.output


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FRONTDESK_BASE_URL", "ftp://eu.frontdesk.example"),
        ("FRONTDESK_UNUSED_CLIENT_DAYS", "99999"),
        ("FRONTDESK_DATABASE_POOL_SIZE", "many"),
    ],
)
def test_a_settings_error_names_the_variable(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variable the operator sets, not the pydantic field behind it."""
    monkeypatch.setenv(variable, value)
    result = run("companies", "list")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: invalid settings: {variable}: ")
    assert variable.removeprefix("FRONTDESK_").lower() not in result.output


@pytest.mark.anyio
async def test_a_dry_run_reports_each_company_and_writes_nothing(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`companies apply --dry-run`: created, updated (with the fields), unchanged; nothing
    is written, on either backend."""
    import anyio

    monkeypatch.setenv("FRONTDESK_DATABASE_URL", database_url)
    first = tmp_path / "first.yaml"
    first.write_text("companies:\n  - {tenant_key: a, name: A}\n", encoding="utf-8")
    second = tmp_path / "second.yaml"
    second.write_text(
        "companies:\n  - {tenant_key: a, name: A2, region: us}\n  - {tenant_key: b, name: B}\n",
        encoding="utf-8",
    )
    applied = await anyio.to_thread.run_sync(run, "companies", "apply", str(first))
    assert applied.exit_code == 0, applied.output

    planned = await anyio.to_thread.run_sync(run, "companies", "apply", "--dry-run", str(second))
    same = await anyio.to_thread.run_sync(run, "companies", "apply", "--dry-run", str(first))

    assert planned.exit_code == 0, planned.output
    assert planned.stdout.splitlines() == [
        "a: would be updated (name, region)",
        "b: would be created",
        "dry run: nothing was written",
    ]
    assert same.stdout.splitlines() == ["a: unchanged", "dry run: nothing was written"]
    listed = await anyio.to_thread.run_sync(run, "companies", "list")
    assert [line.split("\t")[:4] for line in listed.stdout.splitlines()] == [
        ["a", "eu", "active", "A"]
    ]
