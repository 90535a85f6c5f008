"""The demo company has a console its trial users can open: any address of example.com
signs in through the development form."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from tests.conftest import BASE_URL, start_app
from tests.console.support import console_sign_in

pytestmark = pytest.mark.anyio


@pytest.fixture
async def demo(make_settings: Callable[..., Settings]) -> AsyncIterator[Frontdesk]:
    app = await start_app(make_settings(seed_demo=True), companies=None)
    try:
        yield app
    finally:
        await app.services.stop()


async def test_the_demo_companys_console_opens_with_an_example_com_address(
    demo: Frontdesk,
) -> None:
    transport = httpx.ASGITransport(app=demo, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        done = await console_sign_in(client, "demo", "barista@example.com")
        assert done.headers["location"] == f"{BASE_URL}/console/demo/tools"
        tools = await client.get("/console/demo/tools")
    assert tools.status_code == 200
    assert "search_products" in tools.text
