"""The MCP Inspector's command line (npm ``@modelcontextprotocol/inspector-cli``) against
Frontdesk running as a real process: a third-party TypeScript client, pinned in
tests/interop/package.json and its lockfile."""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.conftest import REQUIRE_SERVICES, ROOT
from tests.live.conftest import LiveService

pytestmark = [pytest.mark.live, pytest.mark.interop]

INTEROP = ROOT / "tests" / "interop"
PACKAGE = "@modelcontextprotocol/inspector-cli"
INSTALLED = INTEROP / "node_modules" / "@modelcontextprotocol" / "inspector-cli"
MIN_NODE_MAJOR = 20
RUN_TIMEOUT = 60


def _unavailable(reason: str) -> NoReturn:
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (FRONTDESK_TEST_REQUIRE_SERVICES=1 makes this a failure)")
    pytest.skip(reason)


def _pinned_version() -> str:
    manifest = json.loads((INTEROP / "package.json").read_text())
    return str(manifest["dependencies"][PACKAGE])


def _is_installed() -> bool:
    # Compared with the pin, not just "node_modules exists": a version bump or an
    # interrupted install reinstalls.
    try:
        installed = json.loads((INSTALLED / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        return False
    return bool(installed == _pinned_version())


def _install(npm: str) -> None:
    if _is_installed():
        return
    # Parallel sessions may all arrive here at once; npm must not run twice in one folder.
    digest = hashlib.sha256(str(INTEROP).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"frontdesk-interop-{digest}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _is_installed():
            return
        # `npm ci` installs exactly the committed lockfile and never rewrites it.
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=INTEROP,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if result.returncode != 0 or not _is_installed():
            pytest.fail(
                f"npm ci failed in {INTEROP} (exit {result.returncode}):\n"
                f"{result.stdout}{result.stderr}"
            )


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
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        _unavailable("node and npm are needed for the Inspector CLI interop tests")
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    match = re.fullmatch(r"v(\d+)\..*", version)
    if match is None or int(match[1]) < MIN_NODE_MAJOR:
        _unavailable(f"the Inspector CLI needs Node.js {MIN_NODE_MAJOR}+, found {version!r}")
    _install(npm)
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
    assert list(tools) == ["echo", "search_products", "order_status"]
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
