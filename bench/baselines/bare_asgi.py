"""The ceiling for Python: a bare ASGI callable that answers a JSON-RPC ``tools/call`` of
``echo``, with nothing between uvicorn and the answer but reading the body, parsing and
checking it, and serialising the reply.

Run: ``python -m uvicorn baselines.bare_asgi:app --loop uvloop --http httptools`` (the
driver does, from ``bench/``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON = [(b"content-type", b"application/json")]


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _respond(send: Send, status: int, payload: object) -> None:
    body = orjson.dumps(payload)
    headers = [*_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return  # lifespan: nothing to start
    if scope["method"] != "POST":
        await _respond(send, 405, {"error": "POST only"})
        return
    try:
        message = orjson.loads(await _body(receive))
        params = message["params"]
        valid = (
            message.get("jsonrpc") == "2.0"
            and message.get("method") == "tools/call"
            and params.get("name") == "echo"
            and isinstance(params["arguments"]["text"], str)
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        valid = False
    if not valid:
        error = {"code": -32600, "message": "only tools/call of echo is served here"}
        await _respond(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
        return
    text = params["arguments"]["text"]
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    await _respond(send, 200, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})
