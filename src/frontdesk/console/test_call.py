"""The console's test call: a tool run as a guest through the MCP endpoint itself, not a
copy of it. The console hands the endpoint a ``tools/call`` request as any client would
send it (no Authorization header: a guest), from the staff member's own address, so the
call meets the same checks (the company served, the rate limit, the tool's access, its
arguments' schema, its time limit) and gives the result a client would see."""

from __future__ import annotations

import secrets
from typing import Any

import orjson

from frontdesk.console.context import McpHandler
from frontdesk.web.asgi import Message, Scope

# The revision the console speaks: the one most clients do today.
PROTOCOL_VERSION = "2025-06-18"


async def call_as_guest(
    mcp: McpHandler, scope: Scope, tenant_key: str, tool: str, arguments: dict[str, Any]
) -> tuple[int, dict[str, Any] | None]:
    """The endpoint's HTTP status and its JSON-RPC reply (None when it sent no JSON)."""
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )
    call_scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": scope.get("scheme", "http"),
        "path": f"/v1/{tenant_key}/mcp",
        "raw_path": f"/v1/{tenant_key}/mcp".encode(),
        "query_string": b"",
        "root_path": "",
        "server": scope.get("server"),
        # The staff member's own address: their test calls count against their limit.
        "client": scope.get("client"),
        "headers": [
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", PROTOCOL_VERSION.encode()),
            (b"content-length", str(len(body)).encode()),
        ],
        "state": {},
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    status = 0
    chunks: list[bytes] = []

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await mcp(call_scope, receive, send, tenant_key, f"console-{secrets.token_hex(8)}")
    return status, _reply(b"".join(chunks))


def _reply(raw: bytes) -> dict[str, Any] | None:
    """The JSON-RPC reply, whether it came as JSON or as one server-sent event."""
    text = raw.strip()
    if text.startswith(b"event:") or text.startswith(b"data:"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith(b"data:")]
        text = b"".join(data)
    try:
        reply = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return reply if isinstance(reply, dict) else None


def shown_result(name: str, status: int, reply: dict[str, Any] | None) -> dict[str, Any]:
    """What the page shows of the endpoint's answer: the result's text, or its error."""
    if reply is None:
        return {"tool": name, "status": status, "is_error": True, "text": "No JSON-RPC answer."}
    if "error" in reply:
        error = reply["error"]
        return {"tool": name, "status": status, "is_error": True, "text": str(error.get("message"))}
    result = reply.get("result") or {}
    texts = [
        item.get("text", "") for item in result.get("content", []) if item.get("type") == "text"
    ]
    if "structuredContent" in result:
        texts.append(orjson.dumps(result["structuredContent"], option=orjson.OPT_INDENT_2).decode())
    return {
        "tool": name,
        "status": status,
        "is_error": bool(result.get("isError")),
        "text": "\n".join(texts) or "(no text)",
    }
