"""Prompts that ask the customer first, and tools that need a client capability (MCP
2026-07-28): the input-required result of ``prompts/get`` with its sealed state, -32021 for
what the client did not declare, and what a 2025 client is told instead."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types.methods import validate_server_result

from frontdesk.config import Settings
from frontdesk.protocol.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from frontdesk.protocol.request_state import ANOTHER_CALLS
from tests.conftest import BASE_URL, start_app
from tests.protocol import asking

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
PATH = "/v1/umbrella/mcp"
EVERYTHING: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
ORDER_ANSWER = {"order": {"action": "accept", "content": {"order": "1042"}}}
UMBRELLA: dict[str, Any] = {
    "tenant_key": "umbrella",
    "name": "Umbrella",
    "tools": [
        {
            "name": "summary",
            "description": "Summarises with the client's model.",
            "required_client_capabilities": ["sampling"],
            "provider": {"type": "python", "target": "tests.protocol.asking:summary"},
            "annotations": {
                "title": "Summary",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        },
        {
            # A tool sharing the prompt's name: a state sealed for one is not the other's.
            "name": "letter",
            "description": "Sends a letter.",
            "provider": {"type": "python", "target": "tests.protocol.asking:summary"},
            "annotations": {
                "title": "Letter",
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        },
    ],
    "prompts": [
        {
            "name": "letter",
            "description": "A complaint letter about one order.",
            "arguments": [{"name": "tone"}],
            "provider": {"type": "python", "target": "tests.protocol.asking:complaint_letter"},
        },
        {
            "name": "greeting",
            "description": "A fixed greeting.",
            "messages": [{"role": "user", "text": "Hello!"}],
        },
    ],
}

Json = dict[str, Any]


@pytest.fixture
async def client(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """Frontdesk serving the Umbrella company only."""
    path = tmp_path / "companies.json"
    path.write_text(json.dumps({"companies": [UMBRELLA]}), encoding="utf-8")
    async with contextlib.AsyncExitStack() as stack:
        app = await start_app(make_settings(), path)
        stack.push_async_callback(app.services.stop)
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        yield await stack.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url=BASE_URL)
        )


def modern(method: str, params: Json, capabilities: Json | None = None) -> Json:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": (
            EVERYTHING if capabilities is None else capabilities
        ),
    }
    return {"jsonrpc": "2.0", "id": 9, "method": method, "params": {**params, "_meta": meta}}


async def post_modern(
    client: httpx.AsyncClient, method: str, params: Json, capabilities: Json | None = None
) -> httpx.Response:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method, "mcp-name": params["name"]}
    return await client.post(PATH, json=modern(method, params, capabilities), headers=headers)


def result_of(response: httpx.Response, method: str) -> Json:
    """The result of a reply answered with a 200, valid for the revision."""
    assert response.status_code == 200, response.text
    reply: Json = response.json()
    assert reply["id"] == 9
    result: Json = reply["result"]
    validate_server_result(method, MODERN, result)
    return result


def error_of(response: httpx.Response, code: int, status: int = 400) -> Json:
    assert response.status_code == status, response.text
    reply: Json = response.json()
    assert reply["id"] == 9
    error: Json = reply["error"]
    assert error["code"] == code, error
    return error


Ask = Callable[..., Awaitable[httpx.Response]]


async def ask_letter(client: httpx.AsyncClient, **extra: Any) -> httpx.Response:
    return await post_modern(client, "prompts/get", {"name": "letter", **extra})


# --- prompts/get that asks ---------------------------------------------------------------


async def test_a_prompt_that_asks_gets_an_input_required_result(
    client: httpx.AsyncClient,
) -> None:
    """The builder's question goes out as asked, with a sealed state, not the builder's."""
    result = result_of(await ask_letter(client), "prompts/get")
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"order": asking.TOPIC_QUESTION}
    assert asking.ASKED_STATE not in result["requestState"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "frontdesk"


async def test_the_prompt_is_built_once_the_answer_and_its_state_come_back(
    client: httpx.AsyncClient,
) -> None:
    """Asked again with the answer and the state, the builder gets both and the client a
    complete prompt."""
    sealed = result_of(await ask_letter(client), "prompts/get")["requestState"]
    response = await ask_letter(client, inputResponses=ORDER_ANSWER, requestState=sealed)
    result = result_of(response, "prompts/get")
    assert result["resultType"] == "complete"
    text = result["messages"][0]["content"]["text"]
    assert text.startswith("Write a polite letter about order 1042")
    assert "elicitation/create" in text


async def test_answers_without_the_state_are_asked_again(client: httpx.AsyncClient) -> None:
    """No requestState: the builder has no state of its own, and asks again."""
    result = result_of(await ask_letter(client, inputResponses=ORDER_ANSWER), "prompts/get")
    assert result["resultType"] == "input_required"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        pytest.param("tools/call", {"name": "letter", "arguments": {}}, id="tool-of-that-name"),
        pytest.param("prompts/get", {"name": "letter", "arguments": {"tone": "firm"}}, id="args"),
    ],
)
async def test_a_prompts_state_is_refused_for_any_other_request(
    client: httpx.AsyncClient, method: str, params: Json
) -> None:
    """A state sealed for one prompts/get opens for no tool of the same name and no other
    arguments: -32602 in a 400."""
    sealed = result_of(await ask_letter(client), "prompts/get")["requestState"]
    response = await post_modern(
        client, method, {**params, "inputResponses": ORDER_ANSWER, "requestState": sealed}
    )
    assert error_of(response, INVALID_PARAMS)["message"] == ANOTHER_CALLS


async def test_a_prompt_asking_what_the_client_cannot_answer_is_32021(
    client: httpx.AsyncClient,
) -> None:
    """A client that declared no elicitation is not asked: -32021 in a 400 naming it."""
    response = await post_modern(client, "prompts/get", {"name": "letter"}, {"sampling": {}})
    error = error_of(response, MISSING_REQUIRED_CLIENT_CAPABILITY)
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}
    assert "letter" in error["message"]


async def test_a_fixed_prompt_is_complete_as_before(client: httpx.AsyncClient) -> None:
    """A prompt of fixed messages never asks."""
    result = result_of(
        await post_modern(client, "prompts/get", {"name": "greeting"}), "prompts/get"
    )
    assert result["resultType"] == "complete"
    assert result["messages"][0]["content"]["text"] == "Hello!"


async def test_a_2025_client_is_told_the_prompt_needs_a_client_that_answers(
    client: httpx.AsyncClient,
) -> None:
    """No input-required result in 2025: an error saying which client is needed."""
    message = {"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "letter"}}
    response = await client.post(PATH, json=message)
    error = error_of(response, MISSING_REQUIRED_CLIENT_CAPABILITY, status=200)
    assert "use a client that speaks MCP 2026-07-28" in error["message"]
    assert "data" not in error


# --- tools that need a client capability --------------------------------------------------


async def test_a_tool_needing_a_capability_the_client_lacks_is_32021_before_it_runs(
    client: httpx.AsyncClient,
) -> None:
    """-32021 in a 400 with the request's id and data.requiredCapabilities as a
    ClientCapabilities object naming only what is missing."""
    response = await post_modern(
        client, "tools/call", {"name": "summary", "arguments": {}}, {"elicitation": {}}
    )
    error = error_of(response, MISSING_REQUIRED_CLIENT_CAPABILITY)
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert "summary needs a client that declares sampling" in error["message"]


async def test_a_tool_needing_a_capability_the_client_declares_runs(
    client: httpx.AsyncClient,
) -> None:
    """Declared: the tool runs and may ask what the client can answer."""
    response = await post_modern(client, "tools/call", {"name": "summary", "arguments": {}})
    result = result_of(response, "tools/call")
    assert result["inputRequests"] == {"summary": asking.SUMMARY_REQUEST}


async def test_in_a_batch_the_missing_capability_stays_one_members_error(
    client: httpx.AsyncClient,
) -> None:
    """A batch answers 200: one status cannot describe several replies."""
    lacking = modern("tools/call", {"name": "summary", "arguments": {}}, {})
    declaring = modern("tools/call", {"name": "summary", "arguments": {}}) | {"id": 10}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "summary"}
    response = await client.post(PATH, json=[lacking, declaring], headers=headers)
    assert response.status_code == 200, response.text
    first, second = response.json()
    assert first["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert "result" in second


async def test_a_2025_client_calling_a_tool_that_needs_a_capability_gets_an_error_result(
    client: httpx.AsyncClient,
) -> None:
    """A 2025 client cannot be asked: an isError result saying so, the tool not run."""
    message = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "summary", "arguments": {}},
    }
    response = await client.post(PATH, json=message)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert "this client cannot answer questions" in result["content"][0]["text"]
