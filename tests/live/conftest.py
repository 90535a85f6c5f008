"""Frontdesk as a real process on loopback: the installed ``frontdesk`` command, applied to
the test companies, then served by uvicorn, once per database backend for the whole session."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import COMPANIES_FILE, POSTGRES_ADMIN_URL, ROOT, TEST_SECRET, needs_service
from tests.support.https_documents import HttpsDocuments, run_https_documents
from tests.support.migrated_databases import execute_as_admin, url_of

START_DEADLINE = 30.0
STOP_DEADLINE = 10.0
POLL_INTERVAL = 0.05
OUTPUT_TAIL = 6_000


class LiveServiceError(RuntimeError):
    """The service could not be prepared, started or stopped."""


@dataclass(frozen=True)
class LiveService:
    """A running Frontdesk process and what a test needs to reach it.

    ``base_url`` is where the process listens; ``public_url`` the address clients are told
    (FRONTDESK_BASE_URL), the same unless a proxy in front of it was named when it started.
    """

    backend: str
    base_url: str
    log_path: Path
    public_url: str

    def mcp_url(self, tenant_key: str) -> str:
        return f"{self.base_url}/v1/{tenant_key}/mcp"

    def output(self) -> str:
        """The tail of everything the process printed (for failure messages)."""
        try:
            printed = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return printed[-OUTPUT_TAIL:]


def free_port() -> int:
    """A loopback port free right now (for a process that must know its address in advance)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _frontdesk_command() -> list[str]:
    """The console script installed beside the interpreter running the tests."""
    script = Path(sys.executable).with_name("frontdesk")
    if not script.exists():
        raise LiveServiceError(
            f"{script} is missing; install the project (pip install -e '.[test]') first"
        )
    return [str(script)]


def service_environment(
    base_url: str, database_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment the service runs in: nothing from the developer's FRONTDESK_* leaks in.

    ``extra_env`` comes last, e.g. a company's OIDC client secret named by client_secret_env.
    """
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("FRONTDESK_")
    }
    environment.update(
        {
            "FRONTDESK_BASE_URL": base_url,
            "FRONTDESK_DATABASE_URL": database_url,
            "FRONTDESK_SECRET_KEYS": TEST_SECRET,
            "FRONTDESK_SEED_DEMO": "true",
            # Load tests refresh tokens from one address far faster than any customer would.
            "FRONTDESK_OAUTH_RATE_LIMIT": "1000000000/minute",
            "FRONTDESK_OAUTH_CLIENT_RATE_LIMIT": "1000000000/minute",
            # The python provider imports tests.fixtures.tools from the repository root.
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
        }
    )
    environment.update(extra_env or {})
    return environment


def stop_process(process: subprocess.Popen[bytes]) -> bool:
    """SIGTERM first, as an orchestrator would; SIGKILL only when that is ignored.

    True when the process ended on its own after SIGTERM. uvicorn shuts down gracefully and
    then re-raises the signal it caught, so a clean stop exits with -SIGTERM (or 0).
    """
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return False
    return process.returncode in (0, -signal.SIGTERM)


def _wait_until_healthy(
    process: subprocess.Popen[bytes], service: LiveService, deadline: float
) -> None:
    with httpx.Client(timeout=1.0) as client:
        while True:
            if process.poll() is not None:
                raise LiveServiceError(
                    f"frontdesk serve exited with {process.returncode} before it was healthy:\n"
                    f"{service.output()}"
                )
            try:
                # Straight to the process, whatever address clients are told.
                if client.get(f"{service.base_url}/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise LiveServiceError(
                    f"frontdesk serve was not healthy within {START_DEADLINE:g}s:\n"
                    f"{service.output()}"
                )
            time.sleep(POLL_INTERVAL)


@dataclass
class RunningProcess:
    service: LiveService
    process: subprocess.Popen[bytes]

    def stop(self) -> bool:
        return stop_process(self.process)


def start_service(
    backend: str,
    database_url: str,
    workdir: Path,
    *,
    port: int | None = None,
    extra_env: Mapping[str, str] | None = None,
    extra_companies_files: Sequence[Path] = (),
    workers: int = 1,
    public_url: str | None = None,
) -> RunningProcess:
    """Apply the test companies with the CLI, then start ``frontdesk serve`` and wait for it.

    ``extra_companies_files`` are applied after the test companies; ``port`` is for a caller
    that had to tell someone the address first (an identity provider's redirect URI);
    ``public_url`` is the address clients use when it is not the process's own (a proxy in
    front of several instances).
    """
    port = free_port() if port is None else port
    base_url = f"http://127.0.0.1:{port}"
    public_url = base_url if public_url is None else public_url
    log_path = workdir / f"frontdesk-{backend}-{port}.log"
    service = LiveService(
        backend=backend, base_url=base_url, log_path=log_path, public_url=public_url
    )
    environment = service_environment(public_url, database_url, extra_env)
    command = _frontdesk_command()

    for companies_file in (COMPANIES_FILE, *extra_companies_files):
        applied = subprocess.run(
            [*command, "companies", "apply", str(companies_file)],
            env=environment,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if applied.returncode != 0:
            raise LiveServiceError(
                f"frontdesk companies apply {companies_file.name} exited with"
                f" {applied.returncode}:\n{applied.stdout}{applied.stderr}"
            )

    listen = ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, "serve", *listen],
            env=environment,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_healthy(process, service, time.monotonic() + START_DEADLINE)
    except BaseException:
        stop_process(process)
        raise
    return RunningProcess(service, process)


@contextlib.contextmanager
def running_service(
    backend: str,
    database_url: str,
    workdir: Path,
    *,
    port: int | None = None,
    extra_env: Mapping[str, str] | None = None,
    extra_companies_files: Sequence[Path] = (),
    public_url: str | None = None,
) -> Iterator[LiveService]:
    """A started service, stopped on exit; a crash or an unclean stop fails with its output."""
    running = start_service(
        backend,
        database_url,
        workdir,
        port=port,
        extra_env=extra_env,
        extra_companies_files=extra_companies_files,
        public_url=public_url,
    )
    try:
        yield running.service
    finally:
        crashed = running.process.poll()
        clean = running.stop()
    if crashed is not None:
        raise LiveServiceError(
            f"frontdesk serve ({backend}) died with {crashed} while tests used it:\n"
            f"{running.service.output()}"
        )
    if not clean:
        raise LiveServiceError(
            f"frontdesk serve ({backend}) did not stop cleanly on SIGTERM"
            f" (exit {running.process.returncode}):\n{running.service.output()}"
        )


@pytest.fixture(scope="session")
def live_postgres_url() -> Iterator[str]:
    """A database of its own on the local PostgreSQL for the session's service, then dropped.

    Session-scoped and synchronous, unlike ``postgres_url``: the service outlives any one test,
    and no event loop exists at session scope.
    """
    with postgres_database() as url:
        yield url


@pytest.fixture(
    scope="session",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def live_service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveService]:
    """Frontdesk serving the demo and the test companies over loopback, once per backend."""
    backend: str = request.param
    workdir = tmp_path_factory.mktemp(f"live-{backend}")
    if backend == "sqlite":
        database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    else:
        database_url = str(request.getfixturevalue("live_postgres_url"))
    with running_service(backend, database_url, workdir) as service:
        yield service


@pytest.fixture(scope="session")
def https_documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpsDocuments]:
    """A real HTTPS server with a CA of its own, where tests publish client metadata documents."""
    with run_https_documents(tmp_path_factory.mktemp("https-documents")) as server:
        yield server


def documents_environment(documents: HttpsDocuments) -> dict[str, str]:
    """What lets a service fetch client metadata documents from ``documents``: it trusts the
    tests' CA, and loopback is let through the documents' address policy (a test-only
    setting, which production refuses)."""
    return {**documents.environment(), "FRONTDESK_CLIENT_DOCUMENTS_ON_LOOPBACK": "true"}


@pytest.fixture(
    scope="session",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def documents_live_service(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    https_documents: HttpsDocuments,
) -> Iterator[LiveService]:
    """Frontdesk as ``live_service``, also able to fetch client metadata documents from
    ``https_documents``, once per backend (a URL client id is stored with every grant)."""
    backend: str = request.param
    workdir = tmp_path_factory.mktemp(f"live-documents-{backend}")
    environment = documents_environment(https_documents)
    with service_with_own_database(backend, workdir, environment) as service:
        yield service


@contextlib.contextmanager
def service_with_own_database(
    backend: str, workdir: Path, extra_env: Mapping[str, str] | None = None
) -> Iterator[LiveService]:
    """A started service on a database nobody else uses: a SQLite file in ``workdir``, or a
    PostgreSQL database made for it and dropped after it stops."""
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
        else:
            database_url = stack.enter_context(postgres_database())
        yield stack.enter_context(
            running_service(backend, database_url, workdir, extra_env=extra_env)
        )


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A database of its own on the local PostgreSQL, dropped on exit."""
    needs_service("PostgreSQL", "127.0.0.1", 5432)
    name = f"frontdesk_live_{uuid.uuid4().hex[:12]}"
    asyncio.run(execute_as_admin(POSTGRES_ADMIN_URL, f'CREATE DATABASE "{name}"'))
    try:
        yield url_of(POSTGRES_ADMIN_URL, name)
    finally:
        drop = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        asyncio.run(execute_as_admin(POSTGRES_ADMIN_URL, drop))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing live test shows what the service printed, where the failure is reported."""
    report = yield
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        for value in funcargs.values():
            if isinstance(value, LiveService):
                report.sections.append(
                    (f"frontdesk serve output ({value.backend})", value.output())
                )
    return report
