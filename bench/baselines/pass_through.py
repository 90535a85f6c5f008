"""The ceiling of a tool behind an HTTP API: an ASGI application that answers a JSON-RPC
``tools/call`` of ``echo`` by calling the backend (json_backend.py, ``GET /echo``) with
the HTTP client Frontdesk calls backends with (httpx, one client keeping its connections),
and nothing else: no sign-in, no limits, no logs, no checks but the call's shape.

Run: ``BENCH_BACKEND_URL=http://127.0.0.1:PORT python -m uvicorn baselines.pass_through:app``.
"""

from __future__ import annotations

import os

import httpx
import orjson

from baselines.bare_asgi import Receive, Scope, Send, _body, _respond

_backend = httpx.AsyncClient(
    base_url=os.environ.get("BENCH_BACKEND_URL", "http://127.0.0.1:8001"),
    timeout=10.0,
    limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
)


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return  # lifespan: nothing to start
    try:
        message = orjson.loads(await _body(receive))
        params = message["params"]
        text = params["arguments"]["text"]
        valid = message.get("method") == "tools/call" and params.get("name") == "echo"
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        valid = False
    if not valid or not isinstance(text, str):
        error = {"code": -32600, "message": "only tools/call of echo is served here"}
        await _respond(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
        return
    answer = await _backend.get("/echo", params={"text": text})
    document = answer.json()
    result = {
        "content": [{"type": "text", "text": orjson.dumps(document).decode()}],
        "structuredContent": document,
        "isError": answer.status_code != 200,
    }
    await _respond(send, 200, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})
