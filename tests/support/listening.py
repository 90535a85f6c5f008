"""An app already started, served over real HTTP on a free loopback port by uvicorn in the
test's own event loop: another party (a company's API in its thread, a subprocess) can reach
it over the network while the test talks to the same app in-process."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import anyio
import uvicorn

from frontdesk.app import Frontdesk

START_DEADLINE = 10.0
STOP_DEADLINE = 10.0


@contextlib.asynccontextmanager
async def listening_on_loopback(app: Frontdesk) -> AsyncIterator[str]:
    """``app`` served on 127.0.0.1 until the block ends; its URL (``http://127.0.0.1:PORT``).

    The app's Host check takes any port of a loopback base URL, so the tests' usual
    base URL stays the issuer while the service is reached on this port."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    # Its lifespan ran already (tests.conftest.start_app): uvicorn only serves it.
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
    )
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        with anyio.fail_after(START_DEADLINE):
            # uvicorn says it has started only through this flag.
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("uvicorn stopped before it started")
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, STOP_DEADLINE)
        listener.close()
