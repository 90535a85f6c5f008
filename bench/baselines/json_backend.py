"""A company's JSON HTTP API, the one backend every backend scenario calls: Frontdesk's
``http`` provider and its ``openapi`` provider, the bare pass-through, FastMCP and
ContextForge all call this one process.

- ``GET /echo?text=...`` answers ``{"text": ...}``: the operation its OpenAPI document
  (``GET /openapi.json``) describes, for the tools imported from it;
- ``POST /http-tool`` answers a call of Frontdesk's ``http`` provider (tools/http.py) with
  the shorthand ``{"text": <arguments.text>}``. The signature is not checked: a real
  backend checks it, at the backend's cost, not the server's measured here.

Run: ``python -m uvicorn baselines.json_backend:app --loop uvloop --http httptools``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

import orjson

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "Bench API", "version": "1"},
    "servers": [{"url": "/"}],
    "paths": {
        "/echo": {
            "get": {
                "operationId": "echo",
                "summary": "Repeats the text it is given.",
                "parameters": [
                    {"name": "text", "in": "query", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {
                        "description": "The text",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"text": {"type": "string"}},
                                    "required": ["text"],
                                }
                            }
                        },
                    }
                },
            }
        }
    },
}
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
    path, method = scope["path"], scope["method"]
    if path == "/echo" and method == "GET":
        texts = parse_qs(scope["query_string"].decode()).get("text")
        if not texts:
            await _respond(send, 400, {"error": "text is required"})
            return
        await _respond(send, 200, {"text": texts[0]})
    elif path == "/http-tool" and method == "POST":
        try:
            text = orjson.loads(await _body(receive))["arguments"]["text"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            await _respond(send, 400, {"error": "not a call of the http provider"})
            return
        await _respond(send, 200, {"text": text})
    elif path == "/openapi.json":
        await _respond(send, 200, OPENAPI)
    else:
        await _respond(send, 404, {"error": "not found"})
