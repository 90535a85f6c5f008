"""The database out of reach while a staff member uses the console: a page that says so,
503 with Retry-After, as the sign-in pages answer, never a JSON body or a 500."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from frontdesk.config import Settings
from tests.conftest import BASE_URL, start_app
from tests.console.support import CONSOLE_COMPANIES, console_sign_in, csrf_of, post
from tests.oauth import flows

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_change_while_the_database_is_locked_elsewhere_is_a_503_page(
    database_url: str, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    app = await start_app(make_settings(database_url=database_url, database_timeout_seconds=1.0))
    holder: sqlite3.Connection | None = None
    try:
        await flows.add_companies(app, tmp_path, CONSOLE_COMPANIES)
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            await console_sign_in(client)
            csrf = csrf_of((await client.get("/console/vandelay/tools")).text)
            holder = sqlite3.connect(make_url(database_url).database or "", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            answer = await post(
                client,
                "/console/vandelay/tools/switch",
                {"csrf": csrf, "tool": "echo", "enabled": "false"},
            )
            assert answer.status_code == 503, answer.text
            assert answer.headers["content-type"].startswith("text/html")
            assert int(answer.headers["retry-after"]) >= 1
            assert "The console is briefly unavailable" in answer.text
            holder.execute("ROLLBACK")
            done = await post(
                client,
                "/console/vandelay/tools/switch",
                {"csrf": csrf, "tool": "echo", "enabled": "false"},
            )
            assert done.status_code == 303
    finally:
        if holder is not None:
            holder.close()
        await app.services.stop()
