"""The MCP Inspector's command line (npm ``@modelcontextprotocol/inspector-cli``) against
Frontdesk running as a real process: a third-party TypeScript client, pinned in
tests/interop/package.json and its lockfile."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.live.conftest import LiveService
from tests.support.npm import ensure_installed, system_node

pytestmark = [pytest.mark.live, pytest.mark.interop]

INTEROP = ROOT / "tests" / "interop"
INSTALLED = INTEROP / "node_modules" / "@modelcontextprotocol" / "inspector-cli"
MIN_NODE_MAJOR = 20
RUN_TIMEOUT = 60


@dataclass(frozen=True)
class InspectorCli:
    node: str

    def run(self, service: LiveService, tenant_key: str, *arguments: str) -> Any:
        """Run one Inspector CLI method against a company and return its JSON output."""
        command = [
            self.node,
            str(INSTALLED / "build" / "cli.js"),
            "--cli",
            service.mcp_url(tenant_key),
            "--transport",
            "http",
            *arguments,
        ]
        result = subprocess.run(
            command,
            # inspector-cli 1.0.3 looks for its own package.json as "../package.json"
            # relative to the working directory (but imports it relative to its module),
            # so it only starts from a directory one level below a package.json; its build
            # directory is the one where both agree.
            cwd=INSTALLED / "build",
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        assert result.returncode == 0, (
            f"{' '.join(command[2:])} exited with {result.returncode}:\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}\n"
            f"service:\n{service.output()}"
        )
        return json.loads(result.stdout)


@pytest.fixture(scope="session")
def inspector_cli() -> InspectorCli:
    """The pinned Inspector CLI, installed with npm ci on first use."""
    node = system_node(MIN_NODE_MAJOR, "the Inspector CLI interop tests")
    ensure_installed(INTEROP)
    return InspectorCli(node)


@pytest.fixture
def inspect(inspector_cli: InspectorCli, live_service: LiveService) -> Callable[..., Any]:
    """Runs the Inspector CLI against the demo company of the live service."""

    def run(*arguments: str) -> Any:
        return inspector_cli.run(live_service, "demo", *arguments)

    return run


def test_inspector_lists_the_demo_tools(inspect: Callable[..., Any]) -> None:
    """tools/list through the Inspector names every demo tool with its schemas."""
    listing = inspect("--method", "tools/list")
    tools = {tool["name"]: tool for tool in listing["tools"]}
    assert list(tools) == ["echo", "search_products", "order_status", "loyalty_points"]
    assert tools["echo"]["inputSchema"]["required"] == ["text"]
    assert tools["search_products"]["outputSchema"]["required"] == ["products", "count"]


def test_inspector_calls_echo(inspect: Callable[..., Any]) -> None:
    """tools/call echo through the Inspector answers with the text it was given."""
    result = inspect("--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
    assert result == {"content": [{"type": "text", "text": "hi"}], "isError": False}


def test_inspector_calls_a_tool_with_structured_content(inspect: Callable[..., Any]) -> None:
    """search_products through the Inspector returns structured content its SDK accepts."""
    result = inspect(
        "--method", "tools/call", "--tool-name", "search_products", "--tool-arg", "roast=light"
    )
    assert result["isError"] is False
    assert result["structuredContent"]["count"] == 1
    assert result["structuredContent"]["products"][0]["sku"] == "ETH-YIRG"


def test_inspector_reads_a_resource(inspect: Callable[..., Any]) -> None:
    """resources/read through the Inspector returns the shipping policy as markdown."""
    result = inspect("--method", "resources/read", "--uri", "demo://policies/shipping")
    [content] = result["contents"]
    assert content["mimeType"] == "text/markdown"
    assert content["text"].startswith("# Shipping")
