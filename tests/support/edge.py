"""What the edge's tests share: an application on given settings, one request straight
through the ASGI interface, and the request they send."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from frontdesk.app import Frontdesk, create_app
from frontdesk.config import Settings
from tests.conftest import start_app

PUBLIC_BASE_URL = "https://eu.frontdesk.example"
GENERATED_ID = re.compile(r"^[0-9a-f]{16}$")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "edge-test", "version": "1"},
    },
}


@asynccontextmanager
async def serving(settings: Settings, *, start: bool = False) -> AsyncIterator[httpx.AsyncClient]:
    """An app on these settings; unstarted by default, as the edge needs no database.
    Started, it serves the test companies."""
    app = await start_app(settings) if start else create_app(settings)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=settings.base_url) as client:
            yield client
    finally:
        await app.services.stop()


@dataclass
class Answered:
    status: int | None
    body: bytes


async def call_asgi(
    app: Frontdesk,
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]],
    *,
    disconnect: bool = False,
) -> Answered:
    """One request straight through the ASGI interface, for what an HTTP client cannot
    send: no Host at all, or a client gone before its body arrived."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("203.0.113.7", 40000),
        "server": ("127.0.0.1", 8000),
    }
    answered = Answered(None, b"")

    async def receive() -> dict[str, Any]:
        if disconnect:
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.status = message["status"]
        else:
            answered.body += message.get("body", b"")

    await app(scope, receive, send)
    return answered


def listed(value: str) -> set[str]:
    """A comma-separated header value, as a set of lower-case items."""
    return {item.strip().lower() for item in value.split(",")}
