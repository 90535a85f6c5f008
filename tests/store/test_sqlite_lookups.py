"""The access-token lookup on a SQLite file: read synchronously, off the engine, seeing every
commit at once; through the engine whenever the file cannot be read at once."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.oauth.credentials import digest
from frontdesk.store.grant_records import AccessRecord
from frontdesk.store.grants_sqlite import SqliteGrantRepository
from frontdesk.store.sqlite_lookups import UNAVAILABLE, SqliteAccessReader
from tests.oauth import flows

CALLS = 20
# Seconds a lookup on a locked file may take: far less than any busy timeout.
NO_WAIT = 0.5


def database_file(settings: Settings) -> str:
    return settings.database_url.split(":///", 1)[1]


async def test_signed_in_calls_do_not_use_the_engine_once_the_token_was_used(
    app: Frontdesk, client: httpx.AsyncClient
) -> None:
    tokens = await flows.obtain_tokens(client)
    checkouts: list[Any] = []
    event.listen(
        app.services.database.engine.sync_engine,
        "checkout",
        lambda *checkout: checkouts.append(checkout),
    )
    # The first call marks the token used: a write, through the engine.
    assert (await flows.whoami_result(client, tokens.access))["email"] == "peter@initech.example"
    marked = len(checkouts)
    assert marked >= 1
    for _ in range(CALLS):
        await flows.whoami_result(client, tokens.access)
    assert len(checkouts) == marked


async def test_a_revocation_committed_elsewhere_is_seen_by_the_next_call(
    app: Frontdesk, client: httpx.AsyncClient, settings: Settings
) -> None:
    """As by another worker on the same file: nothing of the token is remembered."""
    tokens = await flows.obtain_tokens(client)
    await flows.whoami_result(client, tokens.access)
    with sqlite3.connect(database_file(settings)) as elsewhere:
        elsewhere.execute(
            "UPDATE access_tokens SET revoked_at = ? WHERE token_hash = ?",
            ("2026-01-01 00:00:00.000000", digest(tokens.access)),
        )
    elsewhere.close()
    assert (await flows.whoami(client, tokens.access)).status_code == 401


async def test_a_locked_file_is_unavailable_until_the_lock_goes(
    app: Frontdesk, client: httpx.AsyncClient, settings: Settings
) -> None:
    """The reader waits for no lock: the event loop it runs on must not stall."""
    tokens = await flows.obtain_tokens(client)
    await flows.whoami_result(client, tokens.access)
    path, token_hash = database_file(settings), digest(tokens.access)
    # WAL in exclusive locking mode keeps every other connection out, and can be entered
    # only by the one connection to the file: the app's are closed first.
    database = app.services.database
    await database.engine.dispose()
    assert database.access_reader is not None
    database.access_reader.close()
    reader = SqliteAccessReader(path)
    try:
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("PRAGMA locking_mode=EXCLUSIVE")
            holder.execute("BEGIN IMMEDIATE")
            holder.execute("UPDATE companies SET revision = revision")
            holder.execute("COMMIT")
            started = time.monotonic()
            assert reader.find(token_hash, flows.TENANT, datetime.now(UTC)) is UNAVAILABLE
            assert time.monotonic() - started < NO_WAIT
        finally:
            holder.close()
        found = reader.find(token_hash, flows.TENANT, datetime.now(UTC))
        assert isinstance(found, tuple)
        grant, used = found
        assert grant.subject == "dev:peter@initech.example"
        assert used
        assert reader.find(token_hash, "globex", datetime.now(UTC)) is None
    finally:
        reader.close()


async def test_a_file_the_reader_cannot_open_is_read_through_the_engine(
    app: Frontdesk, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    tokens = await flows.obtain_tokens(client)
    missing = SqliteAccessReader(str(tmp_path / "elsewhere" / "missing.db"))
    repository = SqliteGrantRepository(app.services.database.engine, missing)
    try:
        found = await repository.find_access(flows.TENANT, digest(tokens.access))
    finally:
        missing.close()
    assert isinstance(found, AccessRecord)
    assert found.email == "peter@initech.example"
    # Not created: the reader opens only a file that is there.
    assert not (tmp_path / "elsewhere" / "missing.db").exists()
