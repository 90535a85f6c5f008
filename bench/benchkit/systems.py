"""What is measured: the servers, and the scenarios that load them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ServerKind = Literal[
    "asgi", "rsgi", "pass-through", "fastmcp", "mcp-python", "mcp-typescript", "frontdesk"
]
Database = Literal["sqlite", "postgres"]
Load = Literal["call", "call-2026", "batch", "list", "bearer", "refresh"]

BATCH = 20
LIST_TOOLS = 50


@dataclass(frozen=True, slots=True)
class Server:
    key: str
    label: str
    kind: ServerKind
    workers: int = 1
    database: Database | None = None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    key: str
    label: str
    server: str
    load: Load
    tenant: str = ""
    diagnostic: bool = False
    # The tool called: echo, or one whose answer comes from the JSON backend.
    tool: str = "echo"

    @property
    def needs_backend(self) -> bool:
        return self.tool != "echo" or SERVER_BY_KEY[self.server].kind in BACKEND_KINDS


# The servers that answer from the JSON backend (baselines/json_backend.py).
BACKEND_KINDS = frozenset({"pass-through", "fastmcp"})
# The company whose tools are the backend's (companies-backend.yaml).
BACKEND_TENANT = "benchapi"

SERVERS = (
    Server("ceiling", "bare ASGI on uvicorn", "asgi"),
    Server("ceiling-rsgi", "bare RSGI on Granian", "rsgi"),
    Server("pass-through", "bare pass-through to the backend, uvicorn", "pass-through"),
    Server("fastmcp", "FastMCP 4 from the backend's OpenAPI document", "fastmcp"),
    Server("ceiling-2w", "bare ASGI on uvicorn, 2 workers", "asgi", 2),
    Server("mcp-python", "MCP Python SDK", "mcp-python"),
    Server("mcp-typescript", "MCP TypeScript SDK", "mcp-typescript"),
    Server("fd-sqlite", "Frontdesk, SQLite, 1 worker", "frontdesk", 1, "sqlite"),
    Server(
        "fd-sqlite-nolog",
        "Frontdesk, SQLite, 1 worker, access log off",
        "frontdesk",
        1,
        "sqlite",
        (("FRONTDESK_ACCESS_LOG", "false"),),
    ),
    Server("fd-pg", "Frontdesk, PostgreSQL, 1 worker", "frontdesk", 1, "postgres"),
    Server("fd-pg-2w", "Frontdesk, PostgreSQL, 2 workers", "frontdesk", 2, "postgres"),
)
SERVER_BY_KEY = {server.key: server for server in SERVERS}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("ceiling", "tools/call: bare ASGI (the ceiling)", "ceiling", "call"),
    # What two workers can give on this machine at all, with wrk sharing their cores: the
    # yardstick for Frontdesk's own 2-worker figures.
    Scenario(
        "ceiling-2w",
        "tools/call: bare ASGI, 2 workers (diagnostic)",
        "ceiling-2w",
        "call",
        diagnostic=True,
    ),
    Scenario("ceiling-rsgi", "tools/call: bare RSGI on Granian", "ceiling-rsgi", "call"),
    Scenario("mcp-python", "tools/call: MCP Python SDK, stateless JSON", "mcp-python", "call"),
    Scenario(
        "mcp-python-2026",
        "tools/call: MCP Python SDK, 2026-07-28 per-request JSON",
        "mcp-python",
        "call-2026",
    ),
    Scenario("mcp-typescript", "tools/call: MCP TS SDK, stateless JSON", "mcp-typescript", "call"),
    Scenario("guest-call", "guest tools/call", "fd-sqlite", "call", "bench"),
    Scenario("guest-call-2026", "guest tools/call, 2026-07-28", "fd-sqlite", "call-2026", "bench"),
    Scenario("guest-batch", f"guest tools/call, batch of {BATCH}", "fd-sqlite", "batch", "bench"),
    Scenario("list50", f"tools/list, {LIST_TOOLS} tools", "fd-sqlite", "list", "bench50"),
    Scenario("bearer-sqlite", "signed-in tools/call (bearer)", "fd-sqlite", "bearer", "benchauth"),
    Scenario(
        "guest-call-nolog",
        "guest tools/call, access log off (diagnostic)",
        "fd-sqlite-nolog",
        "call",
        "bench",
        diagnostic=True,
    ),
    Scenario("guest-call-pg", "guest tools/call", "fd-pg", "call", "bench"),
    Scenario("bearer-pg", "signed-in tools/call (bearer)", "fd-pg", "bearer", "benchauth"),
    Scenario("refresh-pg", "token endpoint: refresh_token grant", "fd-pg", "refresh", "benchauth"),
    Scenario("guest-call-pg-2w", "guest tools/call", "fd-pg-2w", "call", "bench"),
    Scenario("bearer-pg-2w", "signed-in tools/call (bearer)", "fd-pg-2w", "bearer", "benchauth"),
    Scenario(
        "refresh-pg-2w", "token endpoint: refresh_token grant", "fd-pg-2w", "refresh", "benchauth"
    ),
)
# A tool that is a JSON HTTP API: one backend process for every server.
SCENARIOS += (
    Scenario(
        "api-pass-through", "API tool: bare pass-through (its ceiling)", "pass-through", "call"
    ),
    Scenario(
        "api-http",
        "API tool: http provider, guest",
        "fd-sqlite",
        "call",
        BACKEND_TENANT,
        tool="echo_http",
    ),
    Scenario(
        "api-http-bearer",
        "API tool: http provider, signed in",
        "fd-sqlite",
        "bearer",
        BACKEND_TENANT,
        tool="echo_http",
    ),
    Scenario(
        "api-openapi",
        "API tool: imported from OpenAPI, guest",
        "fd-sqlite",
        "call",
        BACKEND_TENANT,
        tool="echo_api",
    ),
    Scenario("api-fastmcp", "API tool: FastMCP 4 from OpenAPI", "fastmcp", "call"),
)
SCENARIO_KEYS = tuple(scenario.key for scenario in SCENARIOS)


def database_of(scenario: Scenario) -> Database | None:
    return SERVER_BY_KEY[scenario.server].database
