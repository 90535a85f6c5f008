"""Building JSON-RPC requests (MCP's messages) and checking the endpoint's envelopes: the one
module of JSON-RPC helpers every directory of tests uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

ACME = "/v1/acme/mcp"
JSON_HEADERS = {"content-type": "application/json"}

Json = dict[str, Any]


def request(method: str, params: Mapping[str, Any] | None = None, request_id: object = 1) -> Json:
    message: Json = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def tool_call(
    name: str, arguments: Mapping[str, Any] | None = None, request_id: object = 1
) -> Json:
    """A ``tools/call`` request for the tool ``name``."""
    return request("tools/call", {"name": name, "arguments": dict(arguments or {})}, request_id)


def notification(method: str, params: Mapping[str, Any] | None = None) -> Json:
    message: Json = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


async def call(
    client: httpx.AsyncClient,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    path: str = ACME,
    headers: Mapping[str, str] | None = None,
) -> Json:
    """One request that must be answered with a 200 reply; the reply's ``result``."""
    reply = await reply_to(client, method, params, path=path, headers=headers)
    assert "error" not in reply, reply
    result: Json = reply["result"]
    return result


async def reply_to(
    client: httpx.AsyncClient,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    path: str = ACME,
    headers: Mapping[str, str] | None = None,
) -> Json:
    """The whole reply to one request answered with a 200."""
    response = await client.post(path, json=request(method, params), headers=headers)
    assert response.status_code == 200, response.text
    reply: Json = response.json()
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == 1
    return reply


async def error_of(
    client: httpx.AsyncClient,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    path: str = ACME,
) -> Json:
    """The ``error`` object of a reply that the endpoint answered with a 200."""
    reply = await reply_to(client, method, params, path=path)
    assert "result" not in reply, reply
    error: Json = reply["error"]
    assert type(error["code"]) is int
    assert isinstance(error["message"], str)
    assert error["message"]
    return error


def assert_envelope(response: httpx.Response, status: int, code: int | None = None) -> Json:
    """The response refuses the whole request with ``status`` and a JSON-RPC error envelope."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    envelope: Json = response.json()
    assert set(envelope) == {"jsonrpc", "id", "error"}
    assert envelope["jsonrpc"] == "2.0"
    error = envelope["error"]
    assert type(error["code"]) is int
    assert isinstance(error["message"], str)
    assert error["message"]
    if code is not None:
        assert error["code"] == code
    return envelope


def tool_text(result: Json) -> str:
    """The text of a tool result's content blocks, joined."""
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
