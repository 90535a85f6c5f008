"""Shared fixtures: a fresh database per test (SQLite always, PostgreSQL when reachable),
each a copy of one migrated once per session (tests/support/migrated_databases.py),
the application built on it with the test companies applied, and an in-process client."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest

from frontdesk.app import Frontdesk, create_app
from frontdesk.companies.definition import CompaniesFile
from frontdesk.companies.files import apply_companies, read_companies_file
from frontdesk.config import Settings
from tests.support import alone, run_summary
from tests.support.migrated_databases import (
    PostgresTemplate,
    SqliteTemplate,
    execute_as_admin,
    url_of,
)
from tests.support.serving import AppsServed, Serve

ROOT = Path(__file__).resolve().parent.parent
COMPANIES_FILE = ROOT / "tests" / "fixtures" / "companies.yaml"
BASE_URL = "http://127.0.0.1:8000"
TEST_SECRET = "test-secret-key-that-is-long-enough-0123456789"

POSTGRES_ADMIN_URL = os.environ.get(
    "FRONTDESK_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("FRONTDESK_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_SERVICES = os.environ.get("FRONTDESK_TEST_REQUIRE_SERVICES") == "1"


# The suite runs on every core (./scripts/test: pytest-xdist). Each worker has its own
# temporary folders, SQLite and PostgreSQL templates (tests/support/migrated_databases.py)
# and made-up tenant keys and Redis keys; what else a parallel run needs is below.


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """A test marked ``alone`` runs while no other worker runs a test (tests/support/alone.py)."""
    with alone.hold_for(item):
        return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """On the controller of a parallel run, as each worker starts (an xdist hook)."""
    alone.share_with(node.config, node.workerinput)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the controller, as each worker finishes (an xdist hook): what it would print."""
    run_summary.gather(node.config, getattr(node, "workeroutput", {}))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    run_summary.write(terminalreporter, config)


def pytest_unconfigure(config: pytest.Config) -> None:
    alone.release(config)
    alone.remove(config)


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


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> SqliteTemplate:
    return SqliteTemplate(tmp_path_factory.mktemp("templates"))


@pytest.fixture
def empty_sqlite_url(tmp_path: Path) -> str:
    """A SQLite file not there yet: for the tests of migrations and of creating it. Named
    apart from ``sqlite_url``'s, so a test may take both."""
    return f"sqlite+aiosqlite:///{tmp_path / 'unmigrated.db'}"


@pytest.fixture
def sqlite_url(tmp_path: Path, sqlite_template: SqliteTemplate) -> str:
    """A SQLite file of its own, at the newest schema (a copy of the session's template)."""
    return f"sqlite+aiosqlite:///{sqlite_template.copy_to(tmp_path / 'frontdesk.db')}"


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[PostgresTemplate]:
    needs_service("PostgreSQL", "127.0.0.1", 5432)
    template = PostgresTemplate(POSTGRES_ADMIN_URL)
    try:
        yield template
    finally:
        template.drop()


@asynccontextmanager
async def _own_postgres_database(
    create: Callable[[str], Awaitable[str]],
) -> AsyncIterator[str]:
    """A database of its own on the local PostgreSQL, made by ``create``, dropped after."""
    name = f"frontdesk_test_{uuid.uuid4().hex[:12]}"
    url = await create(name)
    try:
        yield url
    finally:
        await execute_as_admin(POSTGRES_ADMIN_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _create_empty_postgres(name: str) -> str:
    await execute_as_admin(POSTGRES_ADMIN_URL, f'CREATE DATABASE "{name}"')
    return url_of(POSTGRES_ADMIN_URL, name)


@pytest.fixture
async def empty_postgres_url() -> AsyncIterator[str]:
    """A database of its own, without any schema: for the tests of migrations."""
    needs_service("PostgreSQL", "127.0.0.1", 5432)
    async with _own_postgres_database(_create_empty_postgres) as url:
        yield url


@pytest.fixture
async def postgres_url(postgres_template: PostgresTemplate) -> AsyncIterator[str]:
    """A database of its own at the newest schema (copied from the session's template),
    dropped after the test (in the background, see PostgresTemplate.discard)."""
    name = f"frontdesk_test_{uuid.uuid4().hex[:12]}"
    url = await postgres_template.copy(name)
    try:
        yield url
    finally:
        postgres_template.discard(name)


@pytest.fixture
def redis_url() -> str:
    needs_service("Redis", "127.0.0.1", 6379)
    return REDIS_URL


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """Runs the test once per database backend."""
    return str(request.getfixturevalue(f"{request.param}_url"))


@pytest.fixture(params=["sqlite", "postgres"])
def empty_database_url(request: pytest.FixtureRequest) -> str:
    """Once per database backend, a database without any schema yet."""
    return str(request.getfixturevalue(f"empty_{request.param}_url"))


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


@functools.lru_cache(maxsize=16)
def _companies_read(path: Path, version: tuple[int, int]) -> CompaniesFile:
    """A companies file read once per version of it (modified time, size): parsing the test
    companies' YAML cost about half of each app start, and hundreds of tests start one.
    Sharing the result is safe: the parsed models are frozen."""
    return read_companies_file(path)


def read_companies(path: Path) -> CompaniesFile:
    try:
        stat = path.stat()
    except OSError:
        return read_companies_file(path)  # raises the error a missing file is
    return _companies_read(path, (stat.st_mtime_ns, stat.st_size))


async def start_app(settings: Settings, companies: Path | None = COMPANIES_FILE) -> Frontdesk:
    app = create_app(settings)
    await app.services.start()
    if companies is not None:
        await apply_companies(app.services.companies, read_companies(companies))
    return app


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Frontdesk]:
    app = await start_app(settings)
    try:
        yield app
    finally:
        await app.services.stop()


@pytest.fixture
async def serve(make_settings: Callable[..., Settings], tmp_path: Path) -> AsyncIterator[Serve]:
    """Start an app on the test companies (or on the companies given) with these settings
    overrides; the app and a client for it (tests/support/serving.py)."""
    async with contextlib.AsyncExitStack() as stack:
        yield AppsServed(stack, make_settings, start_app, COMPANIES_FILE, tmp_path).start


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
