"""Shared fixtures: a fresh database per test (SQLite always, PostgreSQL when reachable),
the application built on it with the test companies applied, and an in-process client."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from frontdesk.app import Frontdesk, create_app
from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.config import Settings

ROOT = Path(__file__).resolve().parent.parent
COMPANIES_FILE = ROOT / "tests" / "fixtures" / "companies.yaml"
BASE_URL = "http://127.0.0.1:8000"
TEST_SECRET = "test-secret-key-that-is-long-enough-0123456789"

POSTGRES_ADMIN_URL = os.environ.get(
    "FRONTDESK_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("FRONTDESK_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_SERVICES = os.environ.get("FRONTDESK_TEST_REQUIRE_SERVICES") == "1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def unavailable(reason: str) -> NoReturn:
    """Skip for want of a tool or service, or fail when CI said every one must be there."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (FRONTDESK_TEST_REQUIRE_SERVICES=1 makes this a failure)")
    pytest.skip(reason)


def needs_service(name: str, host: str, port: int) -> None:
    """Skip when a backing service is down, or fail when CI said it must be there."""
    if not _answers(host, port):
        unavailable(f"{name} is not reachable on {host}:{port}")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """A database of its own on the local PostgreSQL, dropped after the test."""
    needs_service("PostgreSQL", "127.0.0.1", 5432)
    name = f"frontdesk_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        async with admin.connect() as connection:
            await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


@pytest.fixture
def redis_url() -> str:
    needs_service("Redis", "127.0.0.1", 6379)
    return REDIS_URL


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """Runs the test once per database backend."""
    return str(request.getfixturevalue(f"{request.param}_url"))


@pytest.fixture
def make_settings(sqlite_url: str) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "database_url": sqlite_url,
            "base_url": BASE_URL,
            "secret_keys": [TEST_SECRET],
            "seed_demo": False,
            "access_log": False,
            "log_json": True,
            # Tests send many token requests from one address; the tests of the OAuth limit
            # itself set their own (tests/oauth/test_oauth_limits.py).
            "oauth_rate_limit": "1000000000/minute",
            "oauth_client_rate_limit": "1000000000/minute",
        }
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def settings(make_settings: Callable[..., Settings], request: pytest.FixtureRequest) -> Settings:
    # A module marked usefixtures("database_url") runs its app once per database backend.
    if "database_url" in request.fixturenames:
        return make_settings(database_url=request.getfixturevalue("database_url"))
    return make_settings()


async def start_app(settings: Settings, companies: Path | None = COMPANIES_FILE) -> Frontdesk:
    app = create_app(settings)
    await app.services.start()
    if companies is not None:
        await apply_companies(app.services.companies, read_companies_file(companies))
    return app


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Frontdesk]:
    app = await start_app(settings)
    try:
        yield app
    finally:
        await app.services.stop()


@pytest.fixture
async def client(app: Frontdesk) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No FRONTDESK_* variable from the developer's shell leaks into a test."""
    for name in list(os.environ):
        if name.startswith("FRONTDESK_"):
            monkeypatch.delenv(name)
