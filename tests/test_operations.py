"""`frontdesk serve` prepares the database once, before any worker starts."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from frontdesk.cli import operations
from frontdesk.config import Settings
from frontdesk.errors import CannotListen, DatabaseNotReady
from frontdesk.store.companies import CompanyRepository
from frontdesk.store.database import Database


def test_serve_migrates_and_seeds_before_workers_and_tells_them_not_to(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers started together would race on migrations and the seed; serve does both first."""
    settings = make_settings(seed_demo=True)
    seen: dict[str, Any] = {}

    def serve_http(_settings: Settings, *, host: str, port: int, workers: int) -> None:
        seen["address"] = (host, port, workers)
        seen["auto_migrate"] = os.environ.get("FRONTDESK_AUTO_MIGRATE")
        seen["seed_demo"] = os.environ.get("FRONTDESK_SEED_DEMO")

    monkeypatch.setattr(operations, "serve_http", serve_http)
    # Set through monkeypatch, so that what serve writes is undone after the test.
    monkeypatch.setenv("FRONTDESK_AUTO_MIGRATE", "true")
    monkeypatch.setenv("FRONTDESK_SEED_DEMO", "true")
    operations.serve(settings, host="127.0.0.1", port=0, workers=2)

    assert seen == {
        "address": ("127.0.0.1", 0, 2),
        "auto_migrate": "false",
        "seed_demo": "false",
    }

    async def stored_keys() -> list[str]:
        database = Database(settings.database_url)
        try:
            return [row.tenant_key for row in await CompanyRepository(database.engine).all()]
        finally:
            await database.close()

    assert anyio.run(stored_keys) == ["demo"]


def _never_serve(*_args: Any, **_options: Any) -> None:
    pytest.fail("the server started where it should not have")


def test_serve_refuses_a_taken_address_before_touching_the_database(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A port held by another socket fails plainly, at once: no migration, no worker."""
    monkeypatch.setattr(operations, "serve_http", _never_serve)
    path = tmp_path / "untouched.db"
    settings = make_settings(database_url=f"sqlite+aiosqlite:///{path}")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CannotListen, match=f"cannot listen on 127.0.0.1:{port}: .*in use"):
            operations.serve(settings, host="127.0.0.1", port=port, workers=2)
    assert not path.exists()


def test_serve_refuses_a_host_name_for_an_address(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server binds addresses only: a name is refused before anything starts."""
    monkeypatch.setattr(operations, "serve_http", _never_serve)
    with pytest.raises(CannotListen, match="give an IP address"):
        operations.serve(make_settings(), host="localhost", port=0, workers=1)


def test_serve_stops_before_serving_when_the_database_cannot_be_migrated(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The migration runs in a child process; its failure still stops serve, plainly."""
    path = tmp_path / "unknown-revision.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        connection.execute("INSERT INTO alembic_version VALUES ('no-such-revision')")
    connection.close()
    monkeypatch.setattr(operations, "serve_http", _never_serve)
    settings = make_settings(database_url=f"sqlite+aiosqlite:///{path}")

    with pytest.raises(DatabaseNotReady, match="could not be migrated or seeded"):
        operations.serve(settings, host="127.0.0.1", port=0, workers=1)


def test_serve_starts_no_child_when_there_is_nothing_to_prepare(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without migrations or the demo seed the database is not even opened before serving."""
    path = tmp_path / "untouched.db"
    served: list[int] = []
    monkeypatch.setattr(
        operations, "serve_http", lambda *_args, **options: served.append(options["workers"])
    )
    monkeypatch.setenv("FRONTDESK_AUTO_MIGRATE", "false")
    monkeypatch.setenv("FRONTDESK_SEED_DEMO", "false")
    settings = make_settings(database_url=f"sqlite+aiosqlite:///{path}", auto_migrate=False)

    operations.serve(settings, host="127.0.0.1", port=0, workers=1)

    assert served == [1]
    assert not path.exists()
