"""Apps a test starts on settings of its own choosing, each with an in-process client; all
stopped when the test ends. The one implementation behind the ``serve`` fixture
(tests/conftest.py) and the directories' variants of it (tests/protocol, tests/tools)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from frontdesk.app import Frontdesk
from frontdesk.config import Settings

# A test's client, at a documentation address (RFC 5737) the access log can tell apart.
CLIENT_ADDRESS = ("203.0.113.7", 40000)


@dataclass(frozen=True, slots=True)
class Served:
    app: Frontdesk
    client: httpx.AsyncClient


Serve = Callable[..., Awaitable[Served]]
StartApp = Callable[[Settings, Path], Awaitable[Frontdesk]]


class AppsServed:
    """Starts apps for one test on ``stack``, which stops them and closes their clients."""

    def __init__(
        self,
        stack: contextlib.AsyncExitStack,
        make_settings: Callable[..., Settings],
        start_app: StartApp,
        default_companies: Path,
        folder: Path,
    ) -> None:
        self._stack = stack
        self._make_settings = make_settings
        self._start_app = start_app
        self._default_companies = default_companies
        self._folder = folder

    async def start(self, *companies: dict[str, Any], **overrides: Any) -> Served:
        """An app on these companies (the test companies when none are given) and settings
        overrides, and a client that speaks to it at its own base URL (the Host check
        expects that host)."""
        path = self._default_companies
        if companies:
            path = self._folder / "companies.json"
            path.write_text(json.dumps({"companies": list(companies)}), encoding="utf-8")
        settings = self._make_settings(**overrides)
        app = await self._start_app(settings, path)
        self._stack.push_async_callback(app.services.stop)
        transport = httpx.ASGITransport(app=app, client=CLIENT_ADDRESS)
        client = httpx.AsyncClient(transport=transport, base_url=settings.base_url)
        await self._stack.enter_async_context(client)
        return Served(app, client)
