"""Fixtures for the sign-in tests: more companies with sign-in, and apps on settings of the
test's own choosing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.store import access_lookups
from tests.conftest import BASE_URL, start_app
from tests.oauth.flows import add_companies

# hooli proves tokens stay with their company; sleepy and faraway have sign-in set up but
# are inactive or in another region, so they are "no active company" here.
MORE_COMPANIES = """
companies:
  - tenant_key: hooli
    name: Hooli
    signin:
      login: {type: dev}
    tools:
      - name: whoami
        description: Says who is asking.
        access: personal
        provider: {type: python, target: "tests.fixtures.tools:whoami"}
  - tenant_key: sleepy
    name: Sleepy Signin
    active: false
    signin:
      login: {type: dev}
  - tenant_key: faraway
    name: Far Away
    region: us
    signin:
      login: {type: dev}
"""


@pytest.fixture
async def more_companies(app: Frontdesk, tmp_path: Path) -> None:
    """Adds hooli (sign-in), sleepy (inactive) and faraway (other region) to the app."""
    await add_companies(app, tmp_path, MORE_COMPANIES)


@dataclass(frozen=True, slots=True)
class Served:
    app: Frontdesk
    client: httpx.AsyncClient


Serve = Callable[..., Awaitable[Served]]


@pytest.fixture
async def serve(make_settings: Callable[..., Settings]) -> AsyncIterator[Serve]:
    """Start an app on the test companies with these settings overrides, and a client that
    speaks to it at its own base URL (the Host check expects that host)."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(**overrides: Any) -> Served:
            settings = make_settings(**overrides)
            app = await start_app(settings)
            stack.push_async_callback(app.services.stop)
            transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
            client = httpx.AsyncClient(transport=transport, base_url=settings.base_url)
            await stack.enter_async_context(client)
            return Served(app, client)

        yield start


@pytest.fixture
def browser(app: Frontdesk) -> Callable[[], httpx.AsyncClient]:
    """A factory of further in-process clients on the same app: other customers' browsers."""

    def open_browser() -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=("198.51.100.9", 41000))
        return httpx.AsyncClient(transport=transport, base_url=BASE_URL)

    return open_browser


@pytest.fixture
def lookup_statements(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """On PostgreSQL, how many lookups each access-token statement carried, in every app of
    the test (store.access_lookups); stays empty on SQLite."""
    made: list[int] = []
    look_up = access_lookups.AccessLookups._look_up

    async def counted(self: access_lookups.AccessLookups, batch: Any, generation: int) -> None:
        made.append(sum(len(waiters) for waiters in batch.values()))
        await look_up(self, batch, generation)

    monkeypatch.setattr(access_lookups.AccessLookups, "_look_up", counted)
    return made
