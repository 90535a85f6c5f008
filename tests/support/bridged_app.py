"""A small ASGI application served by Granian through ``frontdesk.server.rsgi_bridge``, for
tests/test_rsgi_bridge.py: each path shows one thing the bridge must carry across."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from frontdesk.server.rsgi_bridge import RsgiBridge

# Where the lifespan leaves its marks, named by the test.
_MARKS = Path(os.environ.get("BRIDGE_TEST_MARKS", "/nonexistent"))


@asynccontextmanager
async def _lifespan(_app: Starlette) -> AsyncIterator[dict[str, str]]:
    if os.environ.get("BRIDGE_TEST_FAIL_STARTUP"):
        raise RuntimeError("refusing to start")
    (_MARKS / "started").write_text("yes")
    yield {"greeting": "from the lifespan"}
    (_MARKS / "stopped").write_text("yes")


async def echo(request: Request) -> Response:
    """What the application saw of the request, and of its body's messages."""
    pieces = [len(chunk) async for chunk in request.stream() if chunk]
    return JSONResponse(
        {
            "method": request.method,
            "path": request.url.path,
            "query": request.url.query,
            "client": list(request.client) if request.client else None,
            "headers": [[name, value] for name, value in request.headers.items()],
            "pieces": pieces,
            "size": sum(pieces),
            "state": request.state.greeting,
        }
    )


async def stream(_request: Request) -> Response:
    async def parts() -> AsyncIterator[bytes]:
        for number in range(5):
            yield f"part {number}\n".encode()

    return StreamingResponse(parts(), media_type="text/plain", headers={"x-kind": "stream"})


async def fail(_request: Request) -> Response:
    raise RuntimeError("failing on purpose")


class Silent:
    """An ASGI endpoint that ends without answering."""

    async def __call__(self, scope: object, receive: object, send: object) -> None:
        return None


def create() -> RsgiBridge:
    app = Starlette(
        routes=[
            Route("/echo", echo, methods=["GET", "POST"]),
            Route("/stream", stream),
            Route("/fail", fail),
            Route("/silent", Silent()),
        ],
        lifespan=_lifespan,
    )
    return RsgiBridge(app)
