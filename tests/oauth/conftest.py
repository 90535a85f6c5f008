"""Fixtures for the sign-in tests: more companies with sign-in, and further browsers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontdesk.app import Frontdesk
from frontdesk.store import access_lookups
from tests.conftest import BASE_URL
from tests.oauth.flows import add_companies

# The sign-in tests' apps: the suite's ``serve`` fixture (tests/conftest.py).
from tests.support.serving import Serve as Serve
from tests.support.serving import Served as Served

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
        annotations:
          title: Whoami
          readOnlyHint: true
          destructiveHint: false
          idempotentHint: true
          openWorldHint: false
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
