"""The HTTP requests each scenario sends, and the check that a reply is right."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from benchkit.processes import BenchError
from benchkit.systems import BATCH, LIST_TOOLS, Scenario

Json = dict[str, Any]

TEXT = "hello"
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"


def rpc(method: str, params: Json, request_id: int = 1) -> Json:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def echo_call(request_id: int = 1, tool: str = "echo") -> Json:
    return rpc("tools/call", {"name": tool, "arguments": {"text": TEXT}}, request_id)


def modern_echo_call() -> Json:
    """A 2026-07-28 request: no handshake, the envelope rides in ``params._meta``."""
    call = echo_call()
    call["params"]["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "frontdesk-bench", "version": "1"},
    }
    return call


@dataclass(frozen=True, slots=True)
class Request:
    path: str
    body: bytes
    headers: tuple[tuple[str, str], ...]

    def send(self, client: httpx.Client, base_url: str) -> httpx.Response:
        return client.post(base_url + self.path, content=self.body, headers=dict(self.headers))


def mcp_request(scenario: Scenario, path: str, token: str | None) -> Request:
    """What a client sends after the handshake (or, in 2026-07-28 mode, instead of one)."""
    headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]
    body: Json | list[Json]
    if scenario.load == "call-2026":
        body = modern_echo_call()
        headers += [
            ("MCP-Protocol-Version", MODERN_VERSION),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "echo"),
        ]
    else:
        headers.append(("MCP-Protocol-Version", HANDSHAKE_VERSION))
        if scenario.load == "batch":
            body = [echo_call(i) for i in range(1, BATCH + 1)]
        elif scenario.load == "list":
            body = rpc("tools/list", {})
        else:
            body = echo_call(tool=scenario.tool)
    if scenario.load == "bearer":
        if token is None:
            raise BenchError(f"{scenario.key} needs an access token")
        headers.append(("Authorization", f"Bearer {token}"))
    return Request(path, json.dumps(body, separators=(",", ":")).encode(), tuple(headers))


def _echo_problem(reply: Any, request_id: int) -> str | None:
    """None when ``reply`` is the right answer to ``echo_call(request_id)``, else why not."""
    if not isinstance(reply, dict) or reply.get("id") != request_id:
        return f"not a reply to id {request_id}: {str(reply)[:300]}"
    result = reply.get("result")
    if not isinstance(result, dict):
        return f"no result: {str(reply)[:300]}"
    if result.get("isError", False):
        return f"an error: {str(result)[:300]}"
    content = result.get("content")
    if content == [{"type": "text", "text": TEXT}]:
        return None
    # A tool behind the JSON backend answers the backend's {"text": ...}, as JSON text
    # beside structuredContent (the openapi provider, the pass-through, FastMCP).
    if result.get("structuredContent") == {"text": TEXT} and isinstance(content, list):
        return None
    return f"wrong result: {str(result)[:300]}"


def check_reply(scenario: Scenario, response: httpx.Response) -> None:
    """Raise BenchError unless ``response`` is the right answer to the scenario's request."""
    if response.status_code != 200:
        raise BenchError(f"{scenario.key}: HTTP {response.status_code}: {response.text[:300]}")
    try:
        reply = response.json()
    except ValueError:
        raise BenchError(f"{scenario.key}: not JSON: {response.text[:300]}") from None
    problem: str | None
    if scenario.load == "batch":
        if not isinstance(reply, list) or len(reply) != BATCH:
            problem = f"not a batch of {BATCH} replies: {str(reply)[:300]}"
        else:
            problem = next(
                (p for i, item in enumerate(reply, 1) if (p := _echo_problem(item, i))), None
            )
    elif scenario.load == "list":
        tools = reply.get("result", {}).get("tools") if isinstance(reply, dict) else None
        names = {tool.get("name") for tool in tools} if isinstance(tools, list) else set()
        problem = None if len(names) == LIST_TOOLS else f"not {LIST_TOOLS} tools: {reply}"[:300]
    else:
        problem = _echo_problem(reply, 1)
        if problem is None and scenario.load == "call-2026":
            # 2026-07-28 marks every result; a plain 2025 answer would pass the echo check.
            result_type = reply["result"].get("resultType")
            if result_type != "complete":
                problem = f"resultType {result_type!r}, not 'complete': {str(reply)[:300]}"
    if problem:
        raise BenchError(f"{scenario.key}: {problem}")


def check_signed_in(client: httpx.Client, base_url: str, tenant: str, token: str) -> str:
    """The subject a personal tool sees with ``token``: proof it signs a customer in."""
    response = client.post(
        f"{base_url}/v1/{tenant}/mcp",
        json=rpc("tools/call", {"name": "whoami", "arguments": {}}),
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        result = response.json()["result"]
        subject = result["content"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise BenchError(f"whoami with the token: {response.status_code} {response.text}") from None
    if response.status_code != 200 or result.get("isError"):
        raise BenchError(f"whoami with the token: {response.status_code} {response.text}")
    return str(subject)
