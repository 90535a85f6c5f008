"""Fixtures for the MCP endpoint tests: apps on settings of the test's own choosing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from frontdesk.config import Settings
from tests.conftest import BASE_URL, start_app

Serve = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def serve(make_settings: Callable[..., Settings]) -> AsyncIterator[Serve]:
    """Start an app on the test companies with these settings overrides; a client for it."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(**overrides: Any) -> httpx.AsyncClient:
            app = await start_app(make_settings(**overrides))
            stack.push_async_callback(app.services.stop)
            transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
            client = httpx.AsyncClient(transport=transport, base_url=BASE_URL)
            return await stack.enter_async_context(client)

        yield start
