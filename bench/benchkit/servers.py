"""The servers under test, the bench's own databases, and the refresh-token pool."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchkit.processes import BenchError, Processes, free_port, memory_of, pin, run, say
from benchkit.signin import REDIRECT_URI, SignedIn
from benchkit.systems import Database, Server

BENCH = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0
# FastMCP's own environment, made by bench/run from fastmcp-requirements.txt.
FASTMCP_PYTHON = BENCH / ".venv-fastmcp" / "bin" / "python"
MINT_TIMEOUT = 120.0
# What companies-backend.yaml names the backend by, until the run knows its port.
BACKEND_PLACEHOLDER = "http://127.0.0.1:18080"


@dataclass
class Databases:
    """A SQLite file in the run directory and, unless PostgreSQL is left out, a fresh
    PostgreSQL database that is dropped at the end."""

    sqlite_url: str
    postgres_admin: str | None
    postgres_name: str | None = None

    def url(self, kind: Database) -> str:
        if kind == "sqlite":
            return self.sqlite_url
        if self.postgres_admin is None or self.postgres_name is None:
            raise BenchError("PostgreSQL is not set up for this run")
        return f"postgresql+asyncpg://{urlsplit(self.postgres_admin).netloc}/{self.postgres_name}"

    def psql(self, sql: str) -> str:
        if self.postgres_admin is None:
            raise BenchError("PostgreSQL is not set up for this run")
        command = ["psql", self.postgres_admin, "-v", "ON_ERROR_STOP=1", "-tAc", sql]
        return run(command, timeout=60).strip()

    def create_postgres(self) -> str:
        """Create the database; the server's version."""
        self.postgres_name = f"frontdesk_bench_{secrets.token_hex(4)}"
        self.psql(f'CREATE DATABASE "{self.postgres_name}"')
        say(f"created PostgreSQL database {self.postgres_name}")
        return self.psql("SHOW server_version")

    def name_marker(self) -> str:
        """What the process title of a backend connected to the bench database holds."""
        return f" {self.postgres_name} "

    def postmaster(self) -> int | None:
        """The PostgreSQL server's main process, when it runs on this machine."""
        try:
            found = self.psql(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
            )
            checkpointer = int(found.split()[0])
            stat = Path(f"/proc/{checkpointer}/stat").read_text()
        except (BenchError, IndexError, ValueError, OSError):
            return None
        return int(stat.rsplit(")", 1)[1].split()[1])

    def postgres_sessions(self) -> int:
        """Connections ever opened to the bench database (PostgreSQL 14+)."""
        # The name is ours (frontdesk_bench_ + hex), never input.
        query = f"SELECT sessions FROM pg_stat_database WHERE datname = '{self.postgres_name}'"  # noqa: S608
        found = self.psql(query)
        return int(found or 0)

    def drop_postgres(self) -> None:
        if self.postgres_admin is None or self.postgres_name is None:
            return
        try:
            self.psql(f'DROP DATABASE IF EXISTS "{self.postgres_name}" WITH (FORCE)')
            say(f"dropped PostgreSQL database {self.postgres_name}")
        except BenchError as error:
            say(f"could not drop {self.postgres_name}: {error}")


@dataclass
class Environment:
    """What every step of a run needs."""

    args: argparse.Namespace
    run_dir: Path
    processes: Processes
    databases: Databases
    frontdesk_python: Path
    bench_python: Path
    postmaster: int | None = None
    # The JSON backend every backend scenario calls, once started (start_backend).
    backend_url: str = ""

    @property
    def frontdesk(self) -> Path:
        return self.frontdesk_python.parent / "frontdesk"

    def frontdesk_env(
        self, database: Database, port: int, server: Server | None = None
    ) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                # The bench companies' tools (frontdesk_bench_tools) are imported from here.
                "PYTHONPATH": str(BENCH),
                "FRONTDESK_DATABASE_URL": self.databases.url(database),
                "FRONTDESK_BASE_URL": f"http://127.0.0.1:{port}",
                "FRONTDESK_SEED_DEMO": "false",
                # As the bench companies do for MCP calls: the token endpoint still counts
                # every grant, but the one load generator (one address, 32 clients) is never
                # refused.
                "FRONTDESK_OAUTH_RATE_LIMIT": "100000000/minute",
                "FRONTDESK_OAUTH_CLIENT_RATE_LIMIT": "100000000/minute",
                # The JSON backend of the API scenarios listens on loopback, which the
                # outbound policy refuses unless the operator opens it.
                "FRONTDESK_BACKEND_ALLOWED_NETWORKS": "127.0.0.1/32",
            }
        )
        if server is not None:
            env.update(dict(server.env))
        return env

    def server_cpus(self, server: Server) -> str:
        # Two workers on two cores: nothing is left to keep server and load apart.
        if server.workers == 1:
            return str(self.args.server_cpu)
        return f"{self.args.server_cpu},{self.args.load_cpu}"

    def load_cpus(self, server: Server) -> str:
        if server.workers == 1:
            return str(self.args.load_cpu)
        return f"{self.args.server_cpu},{self.args.load_cpu}"


@dataclass
class Running:
    server: Server
    pid: int
    port: int
    rss_at_start_mb: float = 0.0
    # Counted once started: a supervisor (Granian's, even for one worker) and its workers.
    processes: int = 1

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def mcp_path(self, tenant: str) -> str:
        return f"/v1/{tenant}/mcp" if self.server.kind == "frontdesk" else "/mcp"


def start_server(env: Environment, server: Server) -> Running:
    port = free_port()
    log = env.run_dir / f"server-{server.key}.log"
    options: dict[str, Any] = {}
    if server.kind == "asgi":
        command = [str(env.bench_python), "-m", "uvicorn", "baselines.bare_asgi:app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--loop", "uvloop"]
        command += ["--http", "httptools", "--no-access-log", "--log-level", "warning"]
        command += ["--workers", str(server.workers)]
        options["cwd"] = BENCH
    elif server.kind == "rsgi":
        # Granian as Frontdesk is served with it: RSGI, uvloop, HTTP/1.1, one worker.
        command = [str(env.frontdesk_python), "-m", "granian", "--interface", "rsgi"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--loop", "uvloop"]
        command += ["--http", "1", "--workers", str(server.workers), "--no-ws"]
        command += ["--log-level", "warning", "baselines.bare_rsgi:app"]
        options["cwd"] = BENCH
    elif server.kind == "pass-through":
        command = [str(env.bench_python), "-m", "uvicorn", "baselines.pass_through:app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--loop", "uvloop"]
        command += ["--http", "httptools", "--no-access-log", "--log-level", "warning"]
        options["cwd"] = BENCH
        options["env"] = {**os.environ, "BENCH_BACKEND_URL": env.backend_url}
    elif server.kind == "fastmcp":
        script = BENCH / "baselines" / "fastmcp_openapi.py"
        command = [str(FASTMCP_PYTHON), str(script), "--port", str(port)]
        command += ["--backend", env.backend_url]
    elif server.kind == "mcp-python":
        script = BENCH / "baselines" / "mcp_python_server.py"
        command = [str(env.bench_python), str(script), "--port", str(port)]
    elif server.kind == "mcp-typescript":
        script = BENCH / "baselines" / "mcp_typescript_server.mjs"
        command = [env.args.node, str(script), "--port", str(port)]
        options["env"] = {**os.environ, "NODE_ENV": "production"}
    else:
        if server.database is None:
            raise BenchError(f"{server.key} names no database")
        command = [str(env.frontdesk), "serve", "--port", str(port)]
        command += ["--workers", str(server.workers)]
        options["env"] = env.frontdesk_env(server.database, port, server)
    pid = env.processes.start(server.key, [*pin(env.server_cpus(server)), *command], log, **options)
    running = Running(server, pid, port)
    _wait_until_up(env, running, log)
    time.sleep(0.5)  # let the workers finish starting before memory is read
    memory = memory_of(pid)
    running.rss_at_start_mb, running.processes = memory.worker_mb, memory.processes
    return running


def start_backend(env: Environment) -> int:
    """The JSON backend (baselines/json_backend.py) on the load's CPU, where a company's
    API would be another machine's: its CPU is not the server's. Returns its pid."""
    port = free_port()
    command = [str(env.bench_python), "-m", "uvicorn", "baselines.json_backend:app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--loop", "uvloop"]
    command += ["--http", "httptools", "--no-access-log", "--log-level", "warning"]
    log = env.run_dir / "server-backend.log"
    pid = env.processes.start("backend", [*pin(str(env.args.load_cpu)), *command], log, cwd=BENCH)
    env.backend_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{env.backend_url}/echo?text=up", timeout=2.0).status_code == 200:
                return pid
        except httpx.TransportError:
            pass
        if not env.processes.alive(pid):
            raise BenchError(f"the backend exited:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)
    raise BenchError(f"the backend did not answer within {START_TIMEOUT:.0f}s")


def backend_companies(env: Environment) -> Path:
    """companies-backend.yaml with the backend's address, to apply."""
    text = (BENCH / "companies-backend.yaml").read_text()
    applied = env.run_dir / "companies-backend.yaml"
    applied.write_text(text.replace(BACKEND_PLACEHOLDER, env.backend_url))
    return applied


def _wait_until_up(env: Environment, running: Running, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if not env.processes.alive(running.pid):
                raise BenchError(f"{running.server.key} exited:\n{log.read_text()[-2000:]}")
            try:
                if running.server.kind == "frontdesk":
                    ready = client.get(running.base_url + "/readyz").status_code == 200
                else:
                    # Listening is enough: the scenario checks come next. (A GET on an
                    # SDK's endpoint may open an event stream that never ends.)
                    socket.create_connection(("127.0.0.1", running.port), timeout=2).close()
                    ready = True
            except (httpx.TransportError, OSError):
                ready = False
            if ready:
                return
            time.sleep(0.2)
    raise BenchError(f"{running.server.key} did not answer within {START_TIMEOUT:.0f}s")


@dataclass
class TokenPool:
    """Unspent refresh tokens in one database, issued through Frontdesk's own grant code
    (mint_refresh_tokens.py) for the customer and client a sign-in over HTTP made. A load
    needs only the tokens it starts from: each grant it sends answers with the next one
    (wrk/refresh.lua)."""

    env: Environment
    database: Database
    tenant: str
    signed_in: SignedIn
    tokens: list[str] = field(default_factory=list)
    issued: int = 0
    sent: int = 0
    mint_seconds: float = 0.0

    def ensure(self, count: int) -> None:
        missing = count - len(self.tokens)
        if missing <= 0:
            return
        out = self.env.run_dir / "minted.txt"
        command = [str(self.env.frontdesk_python), str(BENCH / "mint_refresh_tokens.py")]
        command += ["--database-url", self.env.databases.url(self.database)]
        command += ["--tenant", self.tenant, "--redirect-uri", REDIRECT_URI]
        command += ["--count", str(missing), "--out", str(out)]
        # The sign-in to copy, by its access token: on stdin, never on a command line.
        minted = run(
            command,
            timeout=MINT_TIMEOUT,
            env=self.env.frontdesk_env(self.database, 0),
            input=self.signed_in.access_token + "\n",
        )
        summary = json.loads(minted)
        self.tokens += out.read_text().split()
        out.unlink()
        self.issued += missing
        self.mint_seconds += summary["seconds"]
        say(f"issued {missing:,} refresh tokens in {summary['seconds']}s")

    def take(self) -> str:
        self.ensure(1)
        self.sent += 1
        return self.tokens.pop(0)

    def hand_out(self, count: int, path: Path) -> None:
        """``count`` tokens written to ``path`` for a load, and never offered again: the
        load sends some, and which is not worth knowing."""
        self.ensure(count)
        handed, self.tokens = self.tokens[:count], self.tokens[count:]
        path.write_text("".join(token + "\n" for token in handed))
