"""The MCP Python SDK's own client against Frontdesk running as a real process."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client, MCPError
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

from tests.live.conftest import LiveService

pytestmark = pytest.mark.live

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "frontdesk-live-tests", "version": "1"},
    },
}


def texts(result: CallToolResult) -> list[str]:
    """The text of every content block, failing on any block that is not text."""
    found = []
    for block in result.content:
        assert isinstance(block, TextContent), block
        found.append(block.text)
    return found


async def test_sdk_client_in_auto_mode_adopts_2026_07_28_through_discover(
    live_service: LiveService,
) -> None:
    """The SDK's server/discover probe is answered, so it speaks 2026-07-28 without initialize."""
    async with Client(live_service.mcp_url("demo")) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.server_info is not None
        assert client.server_info.name == "frontdesk"
        assert client.server_info.title == "Demo Coffee Roasters"
        assert client.instructions is not None
        assert "search_products" in client.instructions
        assert client.server_capabilities.tools is not None


async def test_sdk_client_in_legacy_mode_negotiates_through_initialize(
    live_service: LiveService,
) -> None:
    """The handshake of the 2025 revisions is served as before, with its session."""
    async with Client(live_service.mcp_url("demo"), mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None
        assert client.server_info.title == "Demo Coffee Roasters"
        echoed = await client.call_tool("echo", {"text": "legacy"})
    assert texts(echoed) == ["legacy"]


async def test_sdk_client_pinned_to_2026_07_28_lists_and_calls_a_guest_tool(
    live_service: LiveService,
) -> None:
    """mode="2026-07-28" sends every request with its envelope and routing headers, unprobed."""
    async with Client(live_service.mcp_url("demo"), mode="2026-07-28") as client:
        assert client.protocol_version == "2026-07-28"
        listing = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "hello at 2026-07-28"})
        dark = await client.call_tool("search_products", {"roast": "dark"})
    assert [tool.name for tool in listing.tools][:2] == ["cancel_order", "echo"]
    assert listing.cache_scope == "public"
    assert listing.ttl_ms >= 0
    assert not echoed.is_error
    assert texts(echoed) == ["hello at 2026-07-28"]
    assert dark.structured_content is not None
    assert dark.structured_content["count"] == 1


async def test_a_2026_probe_with_an_unknown_version_is_told_the_versions_served(
    live_service: LiveService,
) -> None:
    """An unsupported MCP-Protocol-Version: 400, -32022, the request's id and data.supported."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    probe = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": meta}}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            live_service.mcp_url("demo"),
            json=probe,
            headers={"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"},
        )
    assert response.status_code == 400
    reply = response.json()
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32022
    assert "2026-07-28" in reply["error"]["data"]["supported"]
    assert reply["error"]["data"]["requested"] == "2099-01-01"


async def test_demo_tools_are_listed_and_answer(live_service: LiveService) -> None:
    """The demo company's tools are listed, echo repeats and search_products returns structure."""
    async with Client(live_service.mcp_url("demo")) as client:
        listing = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "hello from the SDK"})
        dark = await client.call_tool("search_products", {"roast": "dark"})

    # By name: tools/list's stable order.
    assert [tool.name for tool in listing.tools] == [
        "cancel_order",
        "echo",
        "loyalty_points",
        "order_status",
        "search_products",
    ]
    search = next(tool for tool in listing.tools if tool.name == "search_products")
    assert search.output_schema is not None
    assert search.annotations is not None
    assert search.annotations.read_only_hint is True
    assert not echoed.is_error
    assert texts(echoed) == ["hello from the SDK"]
    assert not dark.is_error
    assert dark.structured_content is not None
    assert dark.structured_content["count"] == 1
    assert [product["sku"] for product in dark.structured_content["products"]] == ["SUM-MAND"]


async def test_demo_order_status_schema_describes_its_argument_whole(
    live_service: LiveService,
) -> None:
    """order_status's order_id carries its full description and no stray schema keys."""
    async with Client(live_service.mcp_url("demo")) as client:
        listing = await client.list_tools()
    order_status = next(tool for tool in listing.tools if tool.name == "order_status")
    assert order_status.input_schema["properties"]["order_id"] == {
        "type": "string",
        "description": 'An order number, or "latest".',
    }


async def test_demo_resources_are_listed_and_read(live_service: LiveService) -> None:
    """The demo's shipping policy is listed, read as markdown, and its template is listed."""
    async with Client(live_service.mcp_url("demo")) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource("demo://policies/shipping")

    assert [str(resource.uri) for resource in resources.resources] == ["demo://policies/shipping"]
    assert [template.uri_template for template in templates.resource_templates] == [
        "demo://products/{sku}"
    ]
    [content] = read.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "text/markdown"
    assert content.text.startswith("# Shipping")


async def test_demo_prompt_is_listed_filled_and_completed(live_service: LiveService) -> None:
    """recommend_coffee is listed, filled with the argument, and completes its values."""
    async with Client(live_service.mcp_url("demo")) as client:
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("recommend_coffee", {"taste": "nutty"})
        tastes = await client.complete(
            PromptReference(type="ref/prompt", name="recommend_coffee"),
            {"name": "taste", "value": "f"},
        )
        skus = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="demo://products/{sku}"),
            {"name": "sku", "value": "co"},
        )

    [listed] = prompts.prompts
    assert listed.name == "recommend_coffee"
    assert listed.arguments is not None
    assert [(argument.name, argument.required) for argument in listed.arguments] == [
        ("taste", True)
    ]
    [message] = prompt.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert "likes nutty flavours" in message.content.text
    assert tastes.completion.values == ["fruity", "floral"]
    assert skus.completion.values == ["COL-HUIL"]


async def test_acme_tools_answer_with_text_structure_and_errors(live_service: LiveService) -> None:
    """Acme's fixture tools answer through the SDK: structured sums, two blocks, refusals."""
    async with Client(live_service.mcp_url("acme")) as client:
        listing = await client.list_tools()
        added = await client.call_tool("add", {"a": 2, "b": 3})
        rich = await client.call_tool("rich", {})
        refused = await client.call_tool("refuse", {})
        invalid = await client.call_tool("echo", {})

    assert [tool.name for tool in listing.tools] == [
        "add",
        "crash",
        "echo",
        "refuse",
        "rich",
        "slow",
        "whoami",
        "wrong_shape",
    ]
    assert not added.is_error
    assert added.structured_content == {"sum": 5}
    assert texts(rich) == ["two blocks", "second"]
    assert rich.structured_content == {"blocks": 2}
    assert refused.is_error
    assert texts(refused) == ["That order belongs to someone else."]
    assert invalid.is_error
    assert "text" in texts(invalid)[0]


async def test_acme_personal_tool_explains_that_sign_in_is_missing(
    live_service: LiveService,
) -> None:
    """A guest calling whoami at a company without sign-in gets a readable error result."""
    async with Client(live_service.mcp_url("acme")) as client:
        result = await client.call_tool("whoami", {})
    assert result.is_error
    [message] = texts(result)
    assert "signed-in customers only" in message


async def test_acme_resources_prompts_and_completions(live_service: LiveService) -> None:
    """Acme's text and binary resources read back, and its prompt fills in its arguments."""
    async with Client(live_service.mcp_url("acme")) as client:
        catalog = await client.read_resource("acme://catalog")
        logo = await client.read_resource("acme://logo.png")
        greeting = await client.get_prompt("greet", {"who": "Wile"})
        models = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="acme://anvils/{model}"),
            {"name": "model", "value": "a-"},
        )

    [text_content] = catalog.contents
    assert isinstance(text_content, TextResourceContents)
    assert text_content.text == "# Anvils\nHeavy ones."
    [blob_content] = logo.contents
    assert isinstance(blob_content, BlobResourceContents)
    assert blob_content.mime_type == "image/png"
    assert blob_content.blob == "iVBORw0KGgo="
    assert greeting.description == "Greets someone."
    [message] = greeting.messages
    assert isinstance(message.content, TextContent)
    assert message.content.text == "Say hello to Wile. Mood: ."
    assert models.completion.values == ["A-100", "A-200"]


@pytest.mark.parametrize(("mode", "code"), [("legacy", -32002), ("2026-07-28", -32602)])
async def test_sdk_client_reports_an_unknown_resource(
    live_service: LiveService, mode: str, code: int
) -> None:
    """Reading a URI the company does not have raises the server's JSON-RPC error: -32002 in
    2025, -32602 in 2026-07-28 (which retired -32002)."""
    async with Client(live_service.mcp_url("acme"), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("acme://nothing-here")
    assert raised.value.code == code


async def test_sdk_client_cannot_connect_to_an_unknown_company(
    live_service: LiveService,
) -> None:
    """Connecting to a tenant key nobody serves fails at connect time with the server's error."""
    # The SDK raises from inside its transport's task groups, so the error arrives grouped.
    unknown_company = pytest.RaisesExc(
        MCPError, match="No active company", check=lambda error: error.code == -32004
    )
    with pytest.RaisesGroup(unknown_company, flatten_subgroups=True):
        async with Client(live_service.mcp_url("nobody-here")):
            pass


async def test_raw_session_is_issued_used_and_ended(live_service: LiveService) -> None:
    """initialize issues Mcp-Session-Id, a call with it succeeds, and DELETE ends it with 200."""
    url = live_service.mcp_url("acme")
    async with httpx.AsyncClient(timeout=10) as http:
        initialized = await http.post(url, json=INITIALIZE)
        assert initialized.status_code == 200, initialized.text
        assert initialized.json()["result"]["protocolVersion"] == "2025-06-18"
        session_id = initialized.headers["Mcp-Session-Id"]
        session = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"}

        notified = await http.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=session,
        )
        called = await http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "over a session"}},
            },
            headers=session,
        )
        ended = await http.delete(url, headers=session)

    assert notified.status_code == 202
    assert notified.content == b""
    assert called.status_code == 200, called.text
    reply: dict[str, Any] = called.json()
    assert reply["id"] == 2
    assert reply["result"]["content"] == [{"type": "text", "text": "over a session"}]
    assert ended.status_code == 200
    assert ended.json() == {"ok": True}


async def test_raw_session_id_of_another_company_is_unknown(live_service: LiveService) -> None:
    """A session id issued for acme is refused with 404 at globex, across a real connection."""
    async with httpx.AsyncClient(timeout=10) as http:
        initialized = await http.post(live_service.mcp_url("acme"), json=INITIALIZE)
        elsewhere = await http.post(
            live_service.mcp_url("globex"),
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={"Mcp-Session-Id": initialized.headers["Mcp-Session-Id"]},
        )
    assert elsewhere.status_code == 404
    assert elsewhere.json()["error"]["code"] == -32001
