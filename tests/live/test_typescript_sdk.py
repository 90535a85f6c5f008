"""The MCP TypeScript SDK's own client (npm ``@modelcontextprotocol/sdk``, pinned in
tests/interop/package.json) against Frontdesk running as a real process: it connects with
``StreamableHTTPClientTransport`` and runs tests/interop/ts_client.mjs."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.live.conftest import LiveService
from tests.support.npm import ensure_installed, system_node

pytestmark = [pytest.mark.live, pytest.mark.interop]

INTEROP = ROOT / "tests" / "interop"
CLIENT_SCRIPT = INTEROP / "ts_client.mjs"
# The SDK's engines field asks for Node 18+; the interop tools share one floor.
MIN_NODE_MAJOR = 20
RUN_TIMEOUT = 60


@pytest.fixture(scope="session")
def sdk_node() -> str:
    """A node able to run the pinned TypeScript SDK, installed with npm ci on first use."""
    node = system_node(MIN_NODE_MAJOR, "the TypeScript SDK interop tests")
    ensure_installed(INTEROP)
    return node


@pytest.fixture
def session(sdk_node: str, live_service: LiveService) -> dict[str, Any]:
    """What ts_client.mjs saw in one session with the demo company."""
    result = subprocess.run(
        [sdk_node, str(CLIENT_SCRIPT), live_service.mcp_url("demo")],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, (
        f"ts_client.mjs exited with {result.returncode}:\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    output: dict[str, Any] = json.loads(result.stdout)
    return output


def test_typescript_client_initializes_with_the_newest_version_and_a_session(
    session: dict[str, Any],
) -> None:
    """The SDK negotiates 2025-11-25, keeps the session id and reads honest capabilities."""
    assert session["protocolVersion"] == "2025-11-25"
    assert isinstance(session["sessionId"], str)
    assert session["sessionId"]
    assert session["serverVersion"]["name"] == "frontdesk"
    assert session["serverVersion"]["title"] == "Demo Coffee Roasters"
    assert session["serverCapabilities"]["resources"] == {"subscribe": False, "listChanged": False}


def test_typescript_client_lists_the_demo_tools_with_their_schemas(
    session: dict[str, Any],
) -> None:
    """tools/list through the SDK's schemas keeps each tool's input and output schema."""
    tools = {tool["name"]: tool for tool in session["tools"]}
    assert {"echo", "search_products", "order_status"} <= set(tools)
    assert tools["echo"]["inputSchema"]["required"] == ["text"]
    assert tools["search_products"]["outputSchema"]["required"] == ["products", "count"]


def test_typescript_client_calls_echo(session: dict[str, Any]) -> None:
    """tools/call echo through the SDK answers with the text it was given."""
    assert session["echo"] == {"content": [{"type": "text", "text": "hi"}], "isError": False}


def test_typescript_client_accepts_structured_content_matching_the_output_schema(
    session: dict[str, Any],
) -> None:
    """search_products' structured content passes the SDK's own outputSchema validation."""
    search = session["search"]
    assert search["isError"] is False
    structured = search["structuredContent"]
    assert structured["count"] == 2
    assert [product["sku"] for product in structured["products"]] == ["BRA-CERR", "SUM-MAND"]
    assert json.loads(search["content"][0]["text"]) == structured
