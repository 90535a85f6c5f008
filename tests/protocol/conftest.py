"""Fixtures for the MCP endpoint tests: apps on settings of the test's own choosing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from tests.support.serving import Serve as ServeApp

Serve = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
def serve(serve: ServeApp) -> Serve:
    """Start an app on the test companies with these settings overrides; a client for it
    (the suite's ``serve``, tests/conftest.py, answering the client alone)."""

    async def start(**overrides: Any) -> httpx.AsyncClient:
        return (await serve(**overrides)).client

    return start
