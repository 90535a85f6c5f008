"""In production the console's dev login signs no one in, even for a company stored before
production refused it at apply (companies.production), as the customers' dev login."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from tests.conftest import start_app
from tests.console.support import CONSOLE_COMPANIES
from tests.oauth import flows

pytestmark = pytest.mark.anyio

BASE = "https://eu.frontdesk.example"


@pytest.fixture
async def production(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> AsyncIterator[Frontdesk]:
    settings = make_settings(
        env="production",
        base_url=BASE,
        secret_keys=["production-secret-key-0123456789-abcdefghijkl"],
        data_keys=["production-data-key-0123456789-abcdefghijklm"],
    )
    app = await start_app(settings, companies=None)
    # Stored as by an instance that ran in development.
    await flows.add_companies(app, tmp_path, CONSOLE_COMPANIES)
    try:
        yield app
    finally:
        await app.services.stop()


async def test_the_dev_login_is_refused_in_production(production: Frontdesk) -> None:
    transport = httpx.ASGITransport(app=production, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        answer = await client.get("/console/signin", params={"company": "vandelay"})
    assert answer.status_code == 503
    assert "Sign-in is not available right now" in answer.text
    assert "frontdesk_console_signin" not in answer.headers.get("set-cookie", "")
