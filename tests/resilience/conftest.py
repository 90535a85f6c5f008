"""What the fault tests stand on: fresh databases, a throwaway PostgreSQL cluster, a Redis
server of their own, companies written per test, and the figures every test measures
(written to test-artifacts/resilience.json and summed up at the end of the run)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.conftest import ROOT, unavailable
from tests.live.conftest import free_port
from tests.support import run_summary

Json = dict[str, Any]

ARTIFACT = ROOT / "test-artifacts" / "resilience.json"
# Rate-limit counters of these tests live in a Redis database of their own (the unit tests
# use 15), under tenant keys made up per test, so concurrent runs never share a counter.
SHARED_REDIS_DB = 14
# High enough that load never meets a limit unless the test sets one on purpose.
NO_LIMIT = "100000/minute"
POLL = 0.05
LOG_TAIL = 4_000
COMMAND_TIMEOUT = 60.0
SERVER_START_DEADLINE = 10.0

FIGURES = pytest.StashKey["Figures"]()


def unique_tenant(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def write_companies(path: Path, *companies: Json) -> Path:
    """A companies file (JSON is valid YAML) holding exactly these companies."""
    path.write_text(json.dumps({"companies": list(companies)}), encoding="utf-8")
    return path


def echo_company(tenant_key: str, rate_limit: str) -> Json:
    """A guest-only company with one python tool and its own rate limit."""
    return {
        "tenant_key": tenant_key,
        "name": "Quota Ltd",
        "rate_limit": rate_limit,
        "tools": [
            {
                "name": "echo",
                "description": "Repeats text.",
                "input_schema": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
                "provider": {"type": "python", "target": "tests.fixtures.tools:echo"},
                "annotations": {
                    "title": "Echo",
                    "readOnlyHint": True,
                    "destructiveHint": False,
                    "idempotentHint": True,
                    "openWorldHint": False,
                },
            }
        ],
    }


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
    )


# Figures ---------------------------------------------------------------------------------


def _commit() -> str:
    try:
        found = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return "unknown"
    return found.stdout.strip() or "unknown"


@dataclass
class Figures:
    """What each resilience test measured in this session, by section."""

    sections: dict[str, Json] = field(default_factory=dict)

    def record(self, section: str, figures: Mapping[str, Any]) -> None:
        self.sections[section] = {
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": _commit(),
            **figures,
        }

    def write(self, path: Path = ARTIFACT) -> None:
        """Merge this session's sections into the artifact; sections not run keep theirs.
        Workers of one parallel run each merge their own, one at a time (flock(2) on a
        file beside the artifact), so that none overwrites another's."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.with_suffix(".lock").open("ab") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._merge_into(path)

    def _merge_into(self, path: Path) -> None:
        try:
            previous: Json = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = {}
        sections: dict[str, Json] = dict(previous.get("sections", {}))
        sections.update(self.sections)
        document = {
            "about": (
                "Figures measured by tests/resilience against real Frontdesk processes. "
                "A section is written only when its test passed, so the bounds that test "
                "asserts (no 5xx but the clean 503, no dropped connection, recovery and "
                "latency deadlines, every token kept) held in the run it records."
            ),
            "totals": _totals(sections),
            "sections": sections,
        }
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def summary(self) -> list[str]:
        lines = []
        for name, figures in self.sections.items():
            shown = ", ".join(
                f"{key}={value}"
                for key, value in figures.items()
                if key not in ("measured_at", "commit") and not isinstance(value, dict | list)
            )
            lines.append(f"{name}: {shown}")
        totals = _totals(self.sections)
        lines.append("totals: " + ", ".join(f"{key}={value}" for key, value in totals.items()))
        return lines


def _totals(sections: Mapping[str, Json]) -> Json:
    def total(key: str) -> int:
        return sum(int(figures.get(key, 0)) for figures in sections.values())

    return {
        "requests_sent": total("requests_sent"),
        "requests_answered": total("requests_answered"),
        "faults_survived": total("faults_survived"),
        "unexpected_5xx": total("unexpected_5xx"),
        "dropped_connections": total("dropped_connections"),
    }


@pytest.fixture
def figures(pytestconfig: pytest.Config) -> Figures:
    """This session's figures; a test records its own section once its assertions passed."""
    return pytestconfig.stash.setdefault(FIGURES, Figures())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the figures measured in this session, if any test measured some, and print
    them where the run ends (tests/support/run_summary.py), so a reader of the log sees them
    too."""
    measured = session.config.stash.get(FIGURES, None)
    if measured is not None and measured.sections:
        measured.write()
        lines = [*measured.summary(), f"written to {ARTIFACT.relative_to(ROOT)}"]
        run_summary.add(session.config, "resilience figures", lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing test shows, for every log its processes wrote in its tmp_path, each line
    that is not an access line (warnings, errors, tracebacks, worker restarts: what explains
    a failure that happened early in the run), then the log's tail."""
    report = yield
    directory = getattr(item, "funcargs", {}).get("tmp_path")
    if report.failed and isinstance(directory, Path):
        for log in sorted(directory.rglob("*.log")):
            text = log.read_text(errors="replace")
            notable = [line for line in text.splitlines() if '"event":"request"' not in line]
            name = log.relative_to(directory)
            report.sections.append(
                (f"{name} (all but access lines)", "\n".join(notable)[-LOG_TAIL:])
            )
            report.sections.append((f"{name} (tail)", text[-LOG_TAIL:]))
    return report


# Shared Redis ----------------------------------------------------------------------------


@dataclass
class SharedRedis:
    """The shared Redis, in the resilience tests' own database."""

    url: str
    tenants: list[str] = field(default_factory=list)

    def tenant(self, prefix: str) -> str:
        """A tenant key made up for this test; its counters are removed afterwards."""
        tenant = unique_tenant(prefix)
        self.tenants.append(tenant)
        return tenant


@pytest.fixture
def shared_redis(redis_url: str) -> Iterator[SharedRedis]:
    """The shared Redis (skipped when it is down), cleaned of the test's counters after."""
    shared = SharedRedis(redis_url.rsplit("/", 1)[0] + f"/{SHARED_REDIS_DB}")
    yield shared
    client = redis.Redis.from_url(shared.url)
    try:
        for tenant in shared.tenants:
            for key in client.scan_iter(match=f"*{tenant}*", count=500):
                client.delete(key)
    finally:
        client.close()


# A Redis server of the test's own ----------------------------------------------------------


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class RedisServer:
    """``redis-server`` as a child process on a port of its own, without persistence."""

    port: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.starts += 1
        log_path = self.workdir / f"redis-{self.starts}.log"
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                    "--dir",
                    str(self.workdir),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + SERVER_START_DEADLINE
        while not _pong(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start:\n{log_path.read_text()}")
            time.sleep(POLL)

    def kill(self) -> None:
        """SIGKILL: the server vanishes with its connections, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=COMMAND_TIMEOUT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def keys(self) -> int:
        client = redis.Redis.from_url(self.url)
        try:
            return int(client.dbsize())
        finally:
            client.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server only this test uses (so it can be killed), stopped afterwards."""
    if shutil.which("redis-server") is None:
        unavailable("redis-server is not installed")
    server = RedisServer(free_port(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# A PostgreSQL cluster of the test's own ----------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    """A Debian-managed PostgreSQL cluster made for one test, trust auth on loopback."""

    version: str
    name: str
    port: int

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def ctl(self, action: str, *options: str) -> float:
        """``pg_ctlcluster`` start, stop or restart; the seconds it took."""
        started = time.monotonic()
        done = _run(["pg_ctlcluster", *options, self.version, self.name, action])
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctlcluster {action} failed:\n{done.stdout}{done.stderr}")
        return time.monotonic() - started


def _postgres_version() -> str | None:
    installed = Path("/usr/lib/postgresql")
    versions = sorted(
        (entry.name for entry in installed.glob("*") if (entry / "bin" / "postgres").exists()),
        key=lambda name: [int(part) for part in name.split(".") if part.isdigit()],
    )
    return versions[-1] if versions else None


@pytest.fixture
def throwaway_cluster() -> Iterator[Cluster]:
    """A new PostgreSQL cluster on a free port, so restarting it disturbs nobody else's
    tests; stopped and dropped afterwards, even when the test fails."""
    version = _postgres_version()
    if shutil.which("pg_createcluster") is None or version is None:
        unavailable("pg_createcluster (Debian's postgresql-common) and a server are needed")
    if os.geteuid() != 0:
        unavailable("pg_createcluster needs root to create a cluster owned by postgres")
    cluster = Cluster(version, f"frontdesk_faults_{uuid.uuid4().hex[:8]}", free_port())
    created = _run(
        [
            "pg_createcluster",
            version,
            cluster.name,
            "--port",
            str(cluster.port),
            "--quiet",
            "--",
            "--auth=trust",
        ]
    )
    try:
        if created.returncode != 0:
            unavailable(f"pg_createcluster failed:\n{created.stdout}{created.stderr}")
        cluster.ctl("start")
        yield cluster
    finally:
        _run(["pg_dropcluster", version, cluster.name, "--stop"])
