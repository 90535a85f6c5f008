"""The MCP TypeScript SDK's own client (npm ``@modelcontextprotocol/sdk``, pinned in
tests/interop/package.json) against Frontdesk running as a real process: it connects with
``StreamableHTTPClientTransport`` and runs tests/interop/ts_client.mjs; its OAuth client signs
a customer in through tests/interop/ts_signin.mjs, registered or as a metadata document.

Its successor, the TypeScript client 2.4 (npm ``@modelcontextprotocol/client``, pinned there
too), pinned to 2026-07-28, runs tests/interop/ts_modern_client.mjs as a guest and signs a
customer in through tests/interop/ts_modern_signin.mjs."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.live.conftest import LiveService, free_port
from tests.live.customer_browser import SIGNED_IN_AS
from tests.live.interactive_client import run_signing_in
from tests.support.https_documents import HttpsDocuments
from tests.support.npm import ensure_installed, system_node

pytestmark = [pytest.mark.live, pytest.mark.interop]

INTEROP = ROOT / "tests" / "interop"
CLIENT_SCRIPT = INTEROP / "ts_client.mjs"
MODERN_CLIENT_SCRIPT = INTEROP / "ts_modern_client.mjs"
MODERN = "2026-07-28"
SIGNIN_SCRIPT = INTEROP / "ts_signin.mjs"
MODERN_SIGNIN_SCRIPT = INTEROP / "ts_modern_signin.mjs"
SIGN_IN_TENANT = "initech"
DOCUMENT_PATH = "/clients/typescript-sdk.json"
DOCUMENT_CLIENT_NAME = "Frontdesk TypeScript SDK tests (metadata document)"
# The SDK's engines field asks for Node 18+; the interop tools share one floor.
MIN_NODE_MAJOR = 20
RUN_TIMEOUT = 60


@pytest.fixture(scope="session")
def sdk_node() -> str:
    """A node able to run the pinned TypeScript SDK, installed with npm ci on first use."""
    node = system_node(MIN_NODE_MAJOR, "the TypeScript SDK interop tests")
    ensure_installed(INTEROP)
    return node


def run_client(node: str, script: Path, url: str) -> dict[str, Any]:
    """The JSON document a client script printed after its run against ``url``."""
    result = subprocess.run(
        [node, str(script), url],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, (
        f"{script.name} exited with {result.returncode}:\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    output: dict[str, Any] = json.loads(result.stdout)
    return output


@pytest.fixture
def session(sdk_node: str, live_service: LiveService) -> dict[str, Any]:
    """What ts_client.mjs saw in one session with the demo company."""
    return run_client(sdk_node, CLIENT_SCRIPT, live_service.mcp_url("demo"))


@pytest.fixture
def modern_run(sdk_node: str, live_service: LiveService) -> dict[str, Any]:
    """What ts_modern_client.mjs, pinned to 2026-07-28, saw with the demo company."""
    return run_client(sdk_node, MODERN_CLIENT_SCRIPT, live_service.mcp_url("demo"))


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


def test_typescript_client_2_4_pinned_to_2026_speaks_only_2026_without_a_session(
    modern_run: dict[str, Any],
) -> None:
    """server/discover first, then every request at 2026-07-28 with its routing headers, all
    answered 200, and no session ever issued."""
    traffic = modern_run["traffic"]
    assert [step["mcpMethod"] for step in traffic] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
    ]
    assert [step["mcpName"] for step in traffic[2:]] == ["echo", "search_products"]
    assert {step["protocolVersion"] for step in traffic} == {MODERN}
    assert {step["status"] for step in traffic} == {200}
    assert {step["sessionId"] for step in traffic} == {None}


def test_typescript_client_2_4_lists_and_calls_as_a_guest(modern_run: dict[str, Any]) -> None:
    """The demo tools with their schemas, echo, and structured content the client checked
    against the listed outputSchema; each result names the server."""
    tools = {tool["name"]: tool for tool in modern_run["tools"]}
    assert {"echo", "search_products", "order_status"} <= set(tools)
    assert tools["search_products"]["outputSchema"]["required"] == ["products", "count"]
    echo = modern_run["echo"]
    assert echo["content"] == [{"type": "text", "text": "hi"}]
    assert echo["isError"] is False
    assert echo["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "frontdesk"
    search = modern_run["search"]
    assert search["isError"] is False
    assert search["structuredContent"]["count"] == 2
    assert json.loads(search["content"][0]["text"]) == search["structuredContent"]


async def sign_in(
    node: str,
    service: LiveService,
    client_metadata_url: str | None = None,
    script: Path = SIGNIN_SCRIPT,
) -> dict[str, Any]:
    """What a sign-in script saw signing Ada in at initech, the browser played for it."""
    port = free_port()
    command = [node, str(script), service.mcp_url(SIGN_IN_TENANT), str(port)]
    if client_metadata_url is not None:
        command.append(client_metadata_url)
    run = await run_signing_in(
        command,
        authorize_url=re.compile(r"^authorize: (\S+)$"),
        cwd=INTEROP,
        env=dict(os.environ),
        deadline=RUN_TIMEOUT,
    )
    assert run.returncode == 0, run.report()
    assert len(run.authorize_urls) == 1, run.report()
    output: dict[str, Any] = json.loads(run.stdout[-1])
    output["consentPages"] = run.browser.consent_pages
    return output


def paths(output: dict[str, Any]) -> list[str]:
    return [step["path"] for step in output["traffic"]]


async def test_typescript_client_signs_in_by_registering_and_refreshes(
    sdk_node: str, live_service: LiveService
) -> None:
    """Without a metadata document the SDK registers, signs Ada in, and later refreshes."""
    output = await sign_in(sdk_node, live_service)

    oauth = f"/v1/{SIGN_IN_TENANT}/oauth"
    assert f"{oauth}/register" in paths(output)
    assert output["clientId"].startswith("fdc_")
    assert output["iss"] == f"{live_service.base_url}{oauth}"
    assert output["signedIn"]["structuredContent"] == SIGNED_IN_AS
    assert output["afterRefresh"]["structuredContent"] == SIGNED_IN_AS
    assert output["refreshed"] is True


async def test_typescript_client_signs_in_with_a_client_id_metadata_document(
    sdk_node: str, documents_live_service: LiveService, https_documents: HttpsDocuments
) -> None:
    """With clientMetadataUrl the SDK's client id is that URL, for sign-in and refresh alike."""
    client_id = https_documents.url(DOCUMENT_PATH)
    https_documents.serve_json(
        DOCUMENT_PATH,
        {
            "client_id": client_id,
            "client_name": DOCUMENT_CLIENT_NAME,
            # RFC 8252 7.3: the port is the one the client finds free when it starts.
            "redirect_uris": ["http://127.0.0.1/callback"],
            "token_endpoint_auth_method": "none",
        },
    )

    output = await sign_in(sdk_node, documents_live_service, client_id)

    assert f"/v1/{SIGN_IN_TENANT}/oauth/register" not in paths(output)
    assert output["clientId"] == client_id
    assert https_documents.requests(DOCUMENT_PATH) >= 1
    [consent_page] = output["consentPages"]
    assert DOCUMENT_CLIENT_NAME in consent_page
    assert output["signedIn"]["structuredContent"] == SIGNED_IN_AS
    assert output["afterRefresh"]["structuredContent"] == SIGNED_IN_AS
    assert output["refreshed"] is True


async def test_typescript_client_2_4_pinned_to_2026_signs_in_and_calls_a_personal_tool(
    sdk_node: str, live_service: LiveService
) -> None:
    """Pinned to 2026-07-28, the 2.4 client is challenged on whoami as a guest, registers,
    signs Ada in, calls whoami as her and refreshes by itself; every MCP request it sends
    declares 2026-07-28 and no session is ever issued."""
    output = await sign_in(sdk_node, live_service, script=MODERN_SIGNIN_SCRIPT)

    assert f"/v1/{SIGN_IN_TENANT}/oauth/register" in paths(output)
    assert output["clientId"].startswith("fdc_")
    assert output["iss"] == f"{live_service.base_url}/v1/{SIGN_IN_TENANT}/oauth"
    mcp = [step for step in output["traffic"] if step["path"] == f"/v1/{SIGN_IN_TENANT}/mcp"]
    assert mcp[0]["mcpMethod"] == "server/discover"
    assert {step["protocolVersion"] for step in mcp} == {MODERN}
    assert {step["sessionId"] for step in mcp} == {None}
    whoami = [(step["bearer"], step["status"]) for step in mcp if step["mcpName"] == "whoami"]
    # As a guest: 401. Signed in: 200. With a token never issued: 401, then 200 once the
    # client has refreshed.
    assert whoami == [(False, 401), (True, 200), (True, 401), (True, 200)]
    assert output["signedIn"]["structuredContent"] == SIGNED_IN_AS
    assert output["signedIn"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "frontdesk"
    assert output["afterRefresh"]["structuredContent"] == SIGNED_IN_AS
    assert output["refreshed"] is True
