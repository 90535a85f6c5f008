"""A TCP proxy on loopback that can stall: accept and swallow, as a frozen server does.

Stalled, it keeps every socket open and forwards nothing either way, and it still accepts
new connections (which hear nothing, not even the server's greeting): the failure a
refused connection does not show, where only a bound on each wait ends the waiting. Bytes
are held, not dropped (the proxy stops reading, and TCP holds the rest in the kernel's
buffers), so the exchanges under way go on when the stall ends. It runs on the test's own
event loop::

    async with StallProxy("127.0.0.1", 5432) as proxy:
        url = proxy.rewrite(postgres_url)
        proxy.stall()
        ...
        proxy.resume()
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType

from sqlalchemy.engine import make_url

CHUNK = 64 * 1024
CLOSE_SECONDS = 5.0


class StallProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        # The tasks serving each accepted connection, and their sockets.
        self._serving: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._closing = False
        self.port = 0

    def rewrite(self, url: str) -> str:
        """The database URL ``url`` with its host and port pointing at this proxy."""
        moved = make_url(url).set(host="127.0.0.1", port=self.port)
        return moved.render_as_string(hide_password=False)

    def stall(self) -> None:
        """From now on nothing moves, and nothing is closed."""
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    async def __aenter__(self) -> StallProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        # Every socket closed and every wait woken: each connection's task ends by itself
        # (one cancelled would be reported by asyncio's stream machinery).
        self._closing = True
        self._flowing.set()
        for writer in list(self._writers):
            writer.close()
        if self._serving:
            await asyncio.wait(set(self._serving), timeout=CLOSE_SECONDS)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._serving.add(task)
        self._writers.add(writer)
        ends = [writer]
        pipes: list[asyncio.Task[None]] = []
        try:
            # A connection accepted during a stall reaches the server only once it ends.
            await self._flowing.wait()
            if self._closing:
                return
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream)
            self._writers.add(upstream_writer)
            ends.append(upstream_writer)
            pipes = [
                asyncio.ensure_future(self._pipe(reader, upstream_writer)),
                asyncio.ensure_future(self._pipe(upstream_reader, writer)),
            ]
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        except OSError:
            pass
        finally:
            for pipe in pipes:
                pipe.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)
            for end in ends:
                end.close()
                self._writers.discard(end)
            self._serving.discard(task)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while True:
                await self._flowing.wait()
                chunk = await source.read(CHUNK)
                if not chunk:
                    return
                # Read before the stall began: held until it ends.
                await self._flowing.wait()
                if self._closing:
                    return
                sink.write(chunk)
                await sink.drain()
