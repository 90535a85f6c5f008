"""Company secrets on the command line: never printed, sealed in the database the CLI writes,
and an unset ``*_env`` variable named at apply (cli.py, operations.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from click.testing import CliRunner, Result

from frontdesk.cli.main import main
from tests.support.tool_annotations import read_only

CLIENT_SECRET = "oidc-client-secret-ZQ7x9PLk"
BACKEND_SECRET = "backend-signing-secret-W4rT8nBv"
DATA_KEY = "a-data-key-for-the-cli-tests-0123456789abcdef"


@pytest.fixture(autouse=True)
def database(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "cli.db"
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    monkeypatch.setenv("FRONTDESK_DATA_KEYS", DATA_KEY)
    return path


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def companies_file(tmp_path: Path, **login: Any) -> Path:
    document = {
        "companies": [
            {
                "tenant_key": "acme",
                "name": "Acme",
                "signin": {
                    "login": {
                        "type": "oidc",
                        "issuer": "https://login.example",
                        "client_id": "frontdesk-acme",
                        **(login or {"client_secret": CLIENT_SECRET}),
                    }
                },
                "tools": [
                    {
                        "name": "lookup",
                        "description": "Looks an order up.",
                        "annotations": read_only("Look an order up"),
                        "provider": {
                            "type": "http",
                            "url": "https://backend.example/tools",
                            "secret": BACKEND_SECRET,
                        },
                    }
                ],
            }
        ]
    }
    path = tmp_path / "companies.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_no_secret_is_printed_by_apply_list_or_show(tmp_path: Path) -> None:
    applied = run("companies", "apply", str(companies_file(tmp_path)))
    assert applied.exit_code == 0, applied.output
    listed = run("companies", "list")
    shown = run("companies", "show", "acme")
    assert shown.exit_code == 0, shown.output
    for result in (applied, listed, shown):
        assert CLIENT_SECRET not in result.output
        assert BACKEND_SECRET not in result.output
    definition = orjson.loads(shown.stdout)
    assert definition["signin"]["login"]["client_secret"] == "<redacted>"
    assert definition["tools"][0]["provider"]["secret"] == "<redacted>"
    # Everything else is shown as it is.
    assert definition["signin"]["login"]["client_id"] == "frontdesk-acme"


def test_the_database_the_cli_writes_holds_no_secret_in_clear(
    tmp_path: Path, database: Path
) -> None:
    assert run("companies", "apply", str(companies_file(tmp_path))).exit_code == 0
    with sqlite3.connect(database) as connection:
        [(row,)] = connection.execute("SELECT definition FROM companies").fetchall()
    assert CLIENT_SECRET not in row
    assert BACKEND_SECRET not in row


def test_a_changed_data_key_first_reseals_on_the_next_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rotation as an operator does it: the new key first, the old one after, apply again."""
    path = companies_file(tmp_path)
    assert run("companies", "apply", str(path)).exit_code == 0
    monkeypatch.setenv("FRONTDESK_DATA_KEYS", f"new-{DATA_KEY}, {DATA_KEY}")
    resealed = run("companies", "apply", str(path))
    assert resealed.exit_code == 0, resealed.output
    assert resealed.output == "acme: re-encrypted\n"
    monkeypatch.setenv("FRONTDESK_DATA_KEYS", f"new-{DATA_KEY}")
    assert run("companies", "apply", str(path)).output == "acme: unchanged\n"


def test_an_unset_env_secret_is_a_warning_at_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named: company, field and variable; the file is applied all the same (the instances
    that serve may hold the variable)."""
    monkeypatch.delenv("ACME_OIDC_SECRET", raising=False)
    path = companies_file(tmp_path, client_secret_env="ACME_OIDC_SECRET")
    # The database first: applying to a new one also says it is being created.
    run("db", "upgrade")
    result = run("companies", "apply", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout == "acme: created\n"
    assert result.stderr == (
        "warning: company 'acme': the environment variable ACME_OIDC_SECRET named by"
        " signin.login.client_secret_env is not set\n"
    )
    monkeypatch.setenv("ACME_OIDC_SECRET", "set-now")
    again = run("companies", "apply", str(path))
    assert again.stderr == ""
