"""`frontdesk serve`: without FRONTDESK_BASE_URL it advertises the address it serves, and
an address in use or an unreachable database ends it in one line before anything starts."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from frontdesk.cli import operations
from frontdesk.cli.main import main
from frontdesk.config import Settings


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Settings]:
    """The settings operations.serve was handed; it starts nothing."""
    calls: list[Settings] = []

    def record(settings: Settings, **_options: Any) -> None:
        calls.append(settings)

    monkeypatch.setattr(operations, "serve", record)
    return calls


@pytest.mark.parametrize(
    ("arguments", "base_url"),
    [
        (["--port", "9123"], "http://127.0.0.1:9123"),
        (["--host", "127.0.0.2", "--port", "9123"], "http://127.0.0.2:9123"),
        (["--host", "0.0.0.0", "--port", "9123"], "http://127.0.0.1:9123"),  # noqa: S104
        (["--host", "::1", "--port", "9123"], "http://[::1]:9123"),
        (["--host", "::", "--port", "9123"], "http://[::1]:9123"),
        ([], "http://127.0.0.1:8000"),
    ],
)
def test_without_a_base_url_serve_advertises_the_address_it_serves(
    served: list[Settings], arguments: list[str], base_url: str
) -> None:
    """--port (and --host, loopback for a wildcard) make the base URL every metadata
    document and redirect is built from."""
    result = run("serve", *arguments)
    assert result.exit_code == 0, result.output
    [settings] = served
    assert settings.base_url == base_url
    assert settings.mcp_url("demo") == f"{base_url}/v1/demo/mcp"


def test_a_configured_base_url_wins_over_the_port(
    served: list[Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a proxy the public URL is not the listener's: FRONTDESK_BASE_URL is kept."""
    monkeypatch.setenv("FRONTDESK_BASE_URL", "https://eu.frontdesk.example")
    assert run("serve", "--port", "9123").exit_code == 0
    assert served[0].base_url == "https://eu.frontdesk.example"


def test_the_workers_are_told_the_base_url_serve_chose(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Workers read their settings from the environment: the derived base URL goes there."""
    seen: dict[str, str | None] = {}

    def serve_http(_settings: Settings, **_options: Any) -> None:
        seen["base_url"] = os.environ.get("FRONTDESK_BASE_URL")

    monkeypatch.setattr(operations, "serve_http", serve_http)
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'f.db'}")
    monkeypatch.setenv("FRONTDESK_SEED_DEMO", "false")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run("serve", "--port", str(port))
    assert result.exit_code == 0, result.output
    assert seen == {"base_url": f"http://127.0.0.1:{port}"}


def test_a_port_in_use_is_one_line_before_the_database_is_touched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The address is checked first: exit 1, one line, no database created."""
    path = tmp_path / "untouched.db"
    monkeypatch.setenv("FRONTDESK_DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("serve", "--port", str(port))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}: ")
    assert result.stderr.count("\n") == 1
    assert not path.exists()


def test_an_unreachable_database_stops_serve_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Migrating in the child process fails to connect: the reason, in one line, and no
    traceback; no worker starts."""

    def never(*_args: Any, **_options: Any) -> None:
        pytest.fail("the server started without a database")

    monkeypatch.setattr(operations, "serve_http", never)
    monkeypatch.setenv(
        "FRONTDESK_DATABASE_URL", "postgresql+asyncpg://frontdesk:hunter2@127.0.0.1:1/frontdesk"
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run("serve", "--port", str(port))
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "Error: cannot reach the database at postgresql+asyncpg://frontdesk:***@127.0.0.1:1/"
    )
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
