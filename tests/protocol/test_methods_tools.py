"""``tools/list`` and ``tools/call``: listing shapes, results, and every way a call can fail
without failing the JSON-RPC request (interface 4.2, 5.3-5.4; MCP tools)."""

from __future__ import annotations

from typing import Any

import httpx
import mcp.types
import orjson
import pytest

from frontdesk.protocol.errors import INVALID_PARAMS
from tests.support.jsonrpc import ACME, call, error_of, reply_to, tool_text


async def call_tool(
    client: httpx.AsyncClient, name: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The result of a tools/call; it must validate as an MCP CallToolResult."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    result = await call(client, "tools/call", params)
    mcp.types.CallToolResult.model_validate(result)
    return result


# --- tools/list --------------------------------------------------------------------------


async def test_tools_list_is_a_valid_mcp_listing(client: httpx.AsyncClient) -> None:
    """The listing validates as an MCP ListToolsResult and names every tool of the company,
    in a stable order: by name."""
    result = await call(client, "tools/list")
    listing = mcp.types.ListToolsResult.model_validate(result)
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
    assert "nextCursor" not in result


async def test_a_listed_tool_carries_its_declared_fields(client: httpx.AsyncClient) -> None:
    """name, title, description, inputSchema and annotations appear as the company declared."""
    tools = {tool["name"]: tool for tool in (await call(client, "tools/list"))["tools"]}
    assert tools["echo"] == {
        "name": "echo",
        "title": "Echo",
        "description": "Repeats text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "annotations": {
            "title": "Echo",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    }


async def test_a_listed_tool_carries_its_output_schema(client: httpx.AsyncClient) -> None:
    """A tool that declares an output schema lists it as outputSchema."""
    tools = {tool["name"]: tool for tool in (await call(client, "tools/list"))["tools"]}
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"sum": {"type": "integer"}},
        "required": ["sum"],
    }


async def test_a_listed_tool_omits_what_it_does_not_declare(client: httpx.AsyncClient) -> None:
    """Undeclared optional fields are left out, never sent as null; inputSchema always is."""
    tools = {tool["name"]: tool for tool in (await call(client, "tools/list"))["tools"]}
    assert tools["whoami"] == {
        "name": "whoami",
        "description": "Says who is asking.",
        "inputSchema": {"type": "object"},
        "annotations": {
            "title": "whoami",
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": True,
        },
    }
    for tool in tools.values():
        assert None not in tool.values()
        assert tool["inputSchema"]["type"] == "object"


async def test_tools_list_serves_each_company_its_own_tools(client: httpx.AsyncClient) -> None:
    """globex lists globex's tools, not acme's."""
    result = await call(client, "tools/list", path="/v1/globex/mcp")
    assert [tool["name"] for tool in result["tools"]] == ["echo"]


# --- tools/call: success -----------------------------------------------------------------


async def test_a_text_answer_becomes_one_text_block(client: httpx.AsyncClient) -> None:
    """A tool answering a string gives one text block, isError false, no structured content."""
    result = await call_tool(client, "echo", {"text": "hello anvils"})
    assert result == {"content": [{"type": "text", "text": "hello anvils"}], "isError": False}


async def test_a_dict_answer_becomes_structured_content_and_its_json_text(
    client: httpx.AsyncClient,
) -> None:
    """A dict answer is structuredContent, echoed as JSON text for text-only clients."""
    result = await call_tool(client, "add", {"a": 2, "b": 40})
    assert result["isError"] is False
    assert result["structuredContent"] == {"sum": 42}
    [block] = result["content"]
    assert block["type"] == "text"
    assert orjson.loads(block["text"]) == {"sum": 42}


async def test_a_tool_result_is_passed_through(client: httpx.AsyncClient) -> None:
    """A ToolResult's content blocks and structured content reach the caller unchanged."""
    result = await call_tool(client, "rich")
    assert result == {
        "content": [{"type": "text", "text": "two blocks"}, {"type": "text", "text": "second"}],
        "structuredContent": {"blocks": 2},
        "isError": False,
    }


async def test_the_same_tool_name_answers_at_each_company(client: httpx.AsyncClient) -> None:
    """globex's echo answers at globex's endpoint."""
    result = await call(
        client,
        "tools/call",
        {"name": "echo", "arguments": {"text": "g"}},
        path="/v1/globex/mcp",
    )
    assert tool_text(result) == "g"


# --- tools/call: failures that are results -----------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "mentions"),
    [
        ({}, "text"),
        (None, "text"),
        ({"text": 5}, "text"),
        ({"text": "x", "extra": 1}, "extra"),
    ],
    ids=["missing", "no-arguments", "wrong-type", "additional"],
)
async def test_invalid_arguments_are_an_error_result(
    client: httpx.AsyncClient, arguments: dict[str, Any] | None, mentions: str
) -> None:
    """Arguments breaking the input schema give isError true in a result, naming the field."""
    result = await call_tool(client, "echo", arguments)
    assert result["isError"] is True
    assert mentions in tool_text(result)


async def test_invalid_arguments_to_a_typed_tool_are_an_error_result(
    client: httpx.AsyncClient,
) -> None:
    """A string where an integer is declared is refused before the tool runs."""
    result = await call_tool(client, "add", {"a": "2", "b": 3})
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert "a" in tool_text(result)


async def test_a_tool_that_times_out_is_an_error_result(client: httpx.AsyncClient) -> None:
    """slow (timeout 0.2 s) is cut off, answering isError with a plain message."""
    result = await call_tool(client, "slow")
    assert result["isError"] is True
    text = tool_text(result)
    assert "0.2 seconds" in text
    assert "Traceback" not in text
    assert "Error" not in text


async def test_a_tool_that_crashes_reveals_nothing_internal(client: httpx.AsyncClient) -> None:
    """An exception in a tool is an isError result; its message and type stay in our logs."""
    response = await client.post(
        ACME,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "crash"}},
    )
    assert response.status_code == 200
    assert "hunter2" not in response.text
    assert "RuntimeError" not in response.text
    assert "Traceback" not in response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert tool_text(result)


async def test_a_tool_error_is_an_error_result_with_its_message(
    client: httpx.AsyncClient,
) -> None:
    """ToolError's message is meant for the caller and is passed on as an isError result."""
    result = await call_tool(client, "refuse")
    assert result == {
        "content": [{"type": "text", "text": "That order belongs to someone else."}],
        "isError": True,
    }


async def test_output_breaking_the_output_schema_is_an_error_result(
    client: httpx.AsyncClient,
) -> None:
    """An answer outside the declared output schema is not passed on: isError instead."""
    response = await client.post(
        ACME,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wrong_shape"}},
    )
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert "unexpected" not in response.text


async def test_a_personal_tool_without_signin_says_signin_is_not_available(
    client: httpx.AsyncClient,
) -> None:
    """whoami at a company without sign-in: a 200 isError result saying so, not a 401."""
    response = await client.post(
        ACME,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami"}},
    )
    assert response.status_code == 200
    assert "www-authenticate" not in response.headers
    result = response.json()["result"]
    assert result["isError"] is True
    assert "sign-in" in tool_text(result)
    assert "_meta" not in result
    assert "structuredContent" not in result


async def test_a_failing_call_in_a_batch_leaves_the_others_intact(
    client: httpx.AsyncClient,
) -> None:
    """A crash, a timeout and a success side by side each get their own result."""
    batch = [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
        for n, params in enumerate(
            [
                {"name": "crash"},
                {"name": "slow"},
                {"name": "echo", "arguments": {"text": "fine"}},
            ]
        )
    ]
    response = await client.post(ACME, json=batch)
    assert response.status_code == 200
    crash, slow, echo = (reply["result"] for reply in response.json())
    assert crash["isError"] is True
    assert slow["isError"] is True
    assert echo == {"content": [{"type": "text", "text": "fine"}], "isError": False}


# --- tools/call: JSON-RPC errors ---------------------------------------------------------


async def test_an_unknown_tool_is_an_invalid_params_error(client: httpx.AsyncClient) -> None:
    """Calling a tool the company does not offer is a -32602 error, not a result."""
    error = await error_of(client, "tools/call", {"name": "no_such_tool"})
    assert error["code"] == INVALID_PARAMS


async def test_another_companys_tool_is_unknown_here(client: httpx.AsyncClient) -> None:
    """add is acme's; at globex it is unknown (-32602)."""
    error = await error_of(client, "tools/call", {"name": "add"}, path="/v1/globex/mcp")
    assert error["code"] == INVALID_PARAMS


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"name": None},
        {"name": 5},
        {"name": ["echo"]},
        {"name": "echo", "arguments": ["hi"]},
        {"name": "echo", "arguments": "hi"},
        {"name": "echo", "arguments": 1},
    ],
    ids=[
        "name-missing",
        "name-null",
        "name-number",
        "name-array",
        "arguments-array",
        "arguments-string",
        "arguments-number",
    ],
)
async def test_malformed_call_params_are_an_invalid_params_error(
    client: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    """A name that is not a string, or arguments that are not an object, is -32602."""
    error = await error_of(client, "tools/call", params)
    assert error["code"] == INVALID_PARAMS


async def test_tools_call_without_params_is_an_invalid_params_error(
    client: httpx.AsyncClient,
) -> None:
    """tools/call with no params at all lacks a name: -32602 in a 200."""
    reply = await reply_to(client, "tools/call")
    assert reply["error"]["code"] == INVALID_PARAMS
