"""Fixtures for the adversarial tests: an app whose rate limits stay out of the way of
hundreds of generated requests, two more companies with sign-in, a snapshot of every row
the database holds, and the raw headers of every response."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.web.asgi import Message, Receive, Scope, Send
from tests.conftest import BASE_URL
from tests.oauth.flows import add_companies

# Every generated request runs against one app (the test's), so hypothesis's check that
# function-scoped fixtures are not reset between examples does not apply.
FUZZ = hypothesis_settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Two companies with sign-in, applied from a companies file as an operator would.
SIGNIN_COMPANIES = """
companies:
  - tenant_key: northwind
    name: Northwind
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
  - tenant_key: contoso
    name: Contoso
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
"""


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    """The test settings, with limits no generated request should ever reach."""
    return make_settings(mcp_rate_limit="1000000/minute", registration_rate_limit="1000000/minute")


@pytest.fixture
async def signin_companies(app: Frontdesk, tmp_path: Path) -> None:
    """Adds northwind and contoso, both with dev sign-in, from a companies file."""
    await add_companies(app, tmp_path, SIGNIN_COMPANIES)


# The database ------------------------------------------------------------------------------

Snapshot = dict[str, list[tuple[str, ...]]]


def _every_row(connection: Connection) -> Snapshot:
    tables: Snapshot = {}
    for name in inspect(connection).get_table_names():
        rows = connection.execute(text(f'SELECT * FROM "{name}"'))  # noqa: S608 -- table names from the schema
        tables[name] = sorted(tuple(repr(value) for value in row) for row in rows)
    return tables


async def snapshot(app: Frontdesk) -> Snapshot:
    """Every row of every table, including tables this suite does not know about."""
    async with app.services.database.engine.connect() as connection:
        return await connection.run_sync(_every_row)


# Raw responses -----------------------------------------------------------------------------


@dataclass
class RawResponses:
    """The ``http.response.start`` messages as the application sent them, before httpx
    folds them into a Headers object: what an HTTP server would put on the wire."""

    starts: list[Message] = field(default_factory=list)
    # Sent as the next request's query string as it is: no client would send these bytes
    # (httpx refuses control characters), but a proxy or a raw socket can.
    query: bytes | None = None

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The headers of the latest response."""
        return [(bytes(name), bytes(value)) for name, value in self.starts[-1]["headers"]]

    def every_header(self) -> list[tuple[bytes, bytes]]:
        """The headers of every response so far."""
        return [
            (bytes(name), bytes(value)) for start in self.starts for name, value in start["headers"]
        ]

    def values(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers() if key.lower() == name]


class Recording:
    """An ASGI wrapper that keeps every response start it passes on."""

    def __init__(self, app: Frontdesk, raw: RawResponses) -> None:
        self._app = app
        self._raw = raw

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                self._raw.starts.append(message)
            await send(message)

        if self._raw.query is not None:
            scope = {**scope, "query_string": self._raw.query}
            self._raw.query = None
        await self._app(scope, receive, keep)


@dataclass(frozen=True, slots=True)
class RawClient:
    client: httpx.AsyncClient
    raw: RawResponses


@pytest.fixture
async def raw_client(app: Frontdesk) -> AsyncIterator[RawClient]:
    """A client on the test app that also sees each response's raw header list."""
    raw = RawResponses()
    transport = httpx.ASGITransport(app=Recording(app, raw), client=("203.0.113.8", 40001))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield RawClient(client, raw)


def assert_clean_headers(headers: list[tuple[bytes, bytes]]) -> None:
    """No header name or value holds a byte that would end or split a header line."""
    for name, value in headers:
        assert name == name.strip(), name
        for forbidden in (b"\r", b"\n", b"\x00"):
            assert forbidden not in name, (name, value)
            assert forbidden not in value, (name, value)
