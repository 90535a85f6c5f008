"""uvicorn's httptools protocol, with a response's head and body sent in one write.

uvicorn writes the status line and headers as soon as the app starts its response, and
the body when it arrives: two system calls, and two TCP segments the client must read,
for every small response, where one of each carries the same bytes. On loopback that
second write was about 3 µs of a guest ``tools/call``'s server time (about 5%).

The protocol is uvicorn's own; only its transport is wrapped, so that a response head is
held back and joined to the write that follows it (the body, normally from the very next
``send``). Nothing else changes: bytes leave in the same order, and a head that no write
follows (an app that waits before its first body chunk) goes out by itself on the event
loop's next turn, so it is delayed by one turn at most. Selected with uvicorn's
``http=`` option (operations.serve).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# A response head is the status line and headers, ending in an empty line. Only small
# ones are held: joining copies both parts, which only pays for small writes.
_HEAD_END = b"\r\n\r\n"
_HEAD_PREFIX = b"HTTP/1.1 "
_HELD_AT_MOST = 8192
# "100 Continue" must reach the client at once: it waits for it before sending the body.
_INTERIM = b"HTTP/1.1 1"


class _JoiningTransport:
    """A transport that holds a response head until the next write, or the next turn of
    the event loop, whichever comes first."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif (
            len(data) <= _HELD_AT_MOST
            and data.endswith(_HEAD_END)
            and data.startswith(_HEAD_PREFIX)
            and not data.startswith(_INTERIM)
        ):
            self._held = data
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            # A connection lost before the loop's turn came takes its last bytes with it.
            if not self._transport.is_closing():
                self._transport.write(held)

    def writelines(self, lines: Any) -> None:
        self.flush()
        self._transport.writelines(lines)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        # What was written before a close is sent before the connection ends.
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def __getattr__(self, name: str) -> Any:
        # The rest of the transport interface, used rarely (set_protocol, buffer limits).
        return getattr(self._transport, name)


class JoiningHttpToolsProtocol(HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        joined: Any = _JoiningTransport(transport, self.loop)
        super().connection_made(joined)
