"""The console's usage page: a company's calls per tool, from the hourly rollup every
instance writes (frontdesk.usage), as a chart and a table."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from frontdesk.app import Frontdesk
from tests.console.support import CONSOLE_COMPANIES, console_sign_in
from tests.oauth import flows

pytestmark = pytest.mark.anyio


@pytest.fixture
async def companies(app: Frontdesk, tmp_path: Path) -> Frontdesk:
    await flows.add_companies(app, tmp_path, CONSOLE_COMPANIES)
    return app


async def test_the_usage_page_shows_the_tools_calls(
    companies: Frontdesk, client: httpx.AsyncClient
) -> None:
    await console_sign_in(client)
    empty = await client.get("/console/vandelay/usage")
    assert empty.status_code == 200, empty.text
    assert "No usage data" in empty.text

    for text in ("one", "two"):
        await flows.mcp(client, flows.tool_call("echo", {"text": text}), "vandelay")
    await flows.mcp(client, flows.tool_call("echo", {}), "vandelay")
    # What every instance does every few seconds, done now (frontdesk.usage.flushing).
    assert await companies.services.usage.flush()

    page = await client.get("/console/vandelay/usage")
    assert "No usage data" not in page.text
    chart = re.search(r'<svg class="chart" role="img" aria-label="([^"]*)"', page.text)
    assert chart is not None
    assert "echo: 3 calls, 1 errors" in chart.group(1)
