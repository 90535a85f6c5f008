"""The MCP Inspector's command line (npm ``@modelcontextprotocol/inspector``, its
clients/cli) against Frontdesk running as a real process: a third-party TypeScript client,
pinned in tests/interop/package.json and its lockfile, run on the Node 22 installed there.

Each guest test runs in both of its protocol eras (``--protocol-era legacy``: initialize and
2025-11-25; ``modern``: 2026-07-28, no session), and a signed-in personal call is made in each.

It signs a customer in by itself, as it would at a desk: it prints the authorize URL for a
person to open and listens on a loopback port for the redirect; the person's browser is
played by tests.live.customer_browser. (The older ``@modelcontextprotocol/inspector-cli``
1.x cannot sign in at all: it only sends fixed ``--header`` values.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT
from tests.live.conftest import LiveService, free_port
from tests.live.customer_browser import SIGNED_IN_AS
from tests.live.interactive_client import ClientRun, run_signing_in
from tests.support.https_documents import HttpsDocuments
from tests.support.npm import ensure_installed, node_major

pytestmark = [pytest.mark.live, pytest.mark.interop]

INTEROP = ROOT / "tests" / "interop"
NODE = INTEROP / "node_modules" / ".bin" / "node"
CLI = INTEROP / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "cli"
MIN_NODE_MAJOR = 22
RUN_TIMEOUT = 60
SIGN_IN_TENANT = "initech"
DOCUMENT_PATH = "/clients/inspector.json"
DOCUMENT_CLIENT_NAME = "MCP Inspector (metadata document)"
_AUTHORIZE_PROMPT = re.compile(r"^Please navigate to: (\S+)$")
ERAS = ("legacy", "modern")
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@dataclass(frozen=True)
class InspectorCli:
    node: Path

    def command(self, service: LiveService, tenant_key: str, *arguments: str) -> list[str]:
        # The CLI starts only when argv[1] is its own file by its real path.
        return [
            str(self.node),
            str((CLI / "build" / "index.js").resolve()),
            service.mcp_url(tenant_key),
            "--transport",
            "http",
            "--format",
            "json",
            *arguments,
        ]

    def environment(self, home: Path) -> dict[str, str]:
        """A home of its own (its catalog and stores live there) and secrets in memory only.

        MCP_AUTO_OPEN_ENABLED lets it run a sign-in without a terminal; BROWSER=true makes
        the browser it would open a no-op, since the test plays the browser itself.
        """
        return {
            **os.environ,
            "HOME": str(home),
            "MCP_INSPECTOR_SECRET_STORE": "memory",
            "MCP_AUTO_OPEN_ENABLED": "true",
            "BROWSER": "true",
        }

    def run(self, service: LiveService, tenant_key: str, home: Path, *arguments: str) -> Any:
        """Run one Inspector CLI method against a company and return its JSON result."""
        command = self.command(service, tenant_key, *arguments)
        result = subprocess.run(
            command,
            env=self.environment(home),
            cwd=home,
            stdin=subprocess.DEVNULL,
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
        return json.loads(result.stdout)["result"]

    async def sign_in_and_call(
        self, service: LiveService, home: Path, callback: str, *arguments: str
    ) -> tuple[ClientRun, Any]:
        """whoami at initech, signing Ada in when challenged; the run and whoami's result.

        ``callback`` is where the Inspector listens for the redirect.
        """
        command = self.command(
            service,
            SIGN_IN_TENANT,
            "--method",
            "tools/call",
            "--tool-name",
            "whoami",
            "--callback-url",
            callback,
            *arguments,
        )
        run = await run_signing_in(
            command,
            authorize_url=_AUTHORIZE_PROMPT,
            cwd=home,
            env=self.environment(home),
            deadline=RUN_TIMEOUT,
        )
        assert run.returncode == 0, f"{run.report()}\nservice:\n{service.output()}"
        return run, json.loads(run.stdout[-1])["result"]


def callback_url() -> str:
    """A loopback address free right now for the Inspector's redirect listener."""
    return f"http://127.0.0.1:{free_port()}/oauth/callback"


@pytest.fixture(scope="session")
def inspector_cli() -> InspectorCli:
    """The pinned Inspector and its Node 22, installed with npm ci on first use."""
    ensure_installed(INTEROP)
    major = node_major(str(NODE))
    assert major is not None, f"{NODE} did not report its version"
    assert major >= MIN_NODE_MAJOR, f"the Inspector needs Node.js 22+, {NODE} is {major}"
    return InspectorCli(NODE)


@pytest.fixture(params=ERAS)
def inspect(
    request: pytest.FixtureRequest,
    inspector_cli: InspectorCli,
    live_service: LiveService,
    tmp_path: Path,
) -> Callable[..., Any]:
    """Runs the Inspector CLI against the demo company of the live service, in one era.

    A 2026-07-28 result names the server in its ``_meta`` (the Inspector keeps it on
    calls and reads, not on the listings it gathers): checked here, then set aside so that
    each test reads what both eras answer alike.
    """
    era: str = request.param

    def run(*arguments: str) -> Any:
        result = inspector_cli.run(
            live_service, "demo", tmp_path, "--protocol-era", era, *arguments
        )
        method = arguments[arguments.index("--method") + 1]
        if era == "modern" and not method.endswith("/list"):
            meta = result.pop("_meta")
            assert meta[SERVER_INFO]["title"] == "Demo Coffee Roasters", result
        else:
            assert "_meta" not in result, result
        return result

    return run


def test_inspector_lists_the_demo_tools(inspect: Callable[..., Any]) -> None:
    """tools/list through the Inspector names every demo tool with its schemas."""
    listing = inspect("--method", "tools/list")
    tools = {tool["name"]: tool for tool in listing["tools"]}
    assert {"echo", "search_products", "order_status", "loyalty_points"} <= set(tools)
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


async def test_inspector_signs_in_by_registering_when_a_personal_tool_is_called(
    inspector_cli: InspectorCli, live_service: LiveService, tmp_path: Path
) -> None:
    """whoami as a guest → 401 → the Inspector registers, Ada signs in, whoami is retried."""
    run, result = await inspector_cli.sign_in_and_call(live_service, tmp_path, callback_url())

    assert result["structuredContent"] == SIGNED_IN_AS
    [authorize_url] = map(httpx.URL, run.authorize_urls)
    assert authorize_url.path == f"/v1/{SIGN_IN_TENANT}/oauth/authorize"
    assert authorize_url.params["client_id"].startswith("fdc_")
    [callback] = run.callbacks
    assert callback.status_code == 200


async def test_inspector_in_the_modern_era_signs_in_when_a_personal_tool_is_called(
    inspector_cli: InspectorCli, live_service: LiveService, tmp_path: Path
) -> None:
    """At 2026-07-28 too: whoami as a guest → 401 → Ada signs in and whoami is retried."""
    run, result = await inspector_cli.sign_in_and_call(
        live_service, tmp_path, callback_url(), "--protocol-era", "modern"
    )

    assert result["structuredContent"] == SIGNED_IN_AS
    assert result["_meta"][SERVER_INFO]["name"] == "frontdesk"
    [callback] = run.callbacks
    assert callback.status_code == 200


async def test_inspector_signs_in_with_a_client_id_metadata_document(
    inspector_cli: InspectorCli,
    documents_live_service: LiveService,
    https_documents: HttpsDocuments,
    tmp_path: Path,
) -> None:
    """With --client-metadata-url the Inspector's client id is that URL: no registration."""
    client_id = https_documents.url(DOCUMENT_PATH)
    callback = callback_url()
    https_documents.serve_json(
        DOCUMENT_PATH,
        {
            "client_id": client_id,
            "client_name": DOCUMENT_CLIENT_NAME,
            "redirect_uris": [callback],
            "token_endpoint_auth_method": "none",
        },
    )

    run, result = await inspector_cli.sign_in_and_call(
        documents_live_service, tmp_path, callback, "--client-metadata-url", client_id
    )

    assert result["structuredContent"] == SIGNED_IN_AS
    [authorize_url] = map(httpx.URL, run.authorize_urls)
    assert authorize_url.params["client_id"] == client_id
    assert https_documents.requests(DOCUMENT_PATH) >= 1
    [consent_page] = run.browser.consent_pages
    assert DOCUMENT_CLIENT_NAME in consent_page
