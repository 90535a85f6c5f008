"""The access log: one JSON line per answered request, rendered in runs."""

from __future__ import annotations

import asyncio
import time

import orjson
import structlog

from frontdesk.observability.logs import iso_timestamp
from frontdesk.web.asgi import Scope
from frontdesk.web.network import ClientAddressResolver


class AccessLog:
    """One JSON line per answered request, in the same shape as every other log line.

    It is written on every request, so it skips structlog's processor chain (context
    copying, timestamp formatting and rendering cost more than the request itself on the
    MCP hot path) and renders straight with orjson. With ``json`` off it goes through
    structlog's console renderer, for people reading a terminal.

    Each line names the client's address as the rate limits see it (``network``:
    X-Forwarded-For believed only from ``FRONTDESK_TRUSTED_PROXIES``, and only an IP
    address taken from it), so that a line can be tied to a caller; never a query string,
    whose codes and state must not reach logs, nor any header's text.

    A request only records its figures; the lines are rendered and written together, at
    most ``FLUSH_SECONDS`` after the first of them, every ``MAX_PENDING`` lines, and at
    shut-down (``flush``). Rendered one at a time between requests, a line cost the server
    several times what the same rendering costs in a run of lines, and a write of its own
    per line cost more than the rest of the line (docs/decisions/access-log.md). A written
    chunk stays within ``PIPE_BUF`` so that the workers sharing
    one stderr pipe never interleave inside a line. A crash loses at most the last 50 ms of
    access lines; every other log line is written at once.
    """

    FLUSH_SECONDS = 0.05
    MAX_PENDING = 256
    # POSIX keeps a write of up to PIPE_BUF bytes (4096 on Linux) to a pipe in one piece.
    CHUNK_BYTES = 4096

    def __init__(self, json: bool, addresses: ClientAddressResolver | None = None) -> None:
        self._json = json
        self._addresses = addresses or ClientAddressResolver(())
        self._console = structlog.get_logger("frontdesk.access")
        # The same destination as every other line: the configured logger, unprocessed.
        self._raw = structlog.get_config()["logger_factory"]()
        self._writes_bytes = isinstance(self._raw, structlog.BytesLogger)
        # (wall-clock time, request id, method, path, status, duration in seconds, client
        # address) per request.
        self._pending: list[tuple[float, str, str, str, int, float, str]] = []
        self._flush_timer: asyncio.TimerHandle | None = None

    def record(self, scope: Scope, request_id: str, status: int, seconds: float) -> None:
        """The line of one answered request: its path without the query string, and the
        client's address."""
        client = self._addresses.resolve(scope)
        self.write(request_id, scope["method"], scope["path"], status, seconds, client)

    def write(
        self,
        request_id: str,
        method: str,
        path: str,
        status: int,
        seconds: float,
        client: str,
    ) -> None:
        if not self._json:
            duration_ms = _milliseconds(seconds)
            self._console.info(
                "request",
                method=method,
                path=path,
                status=status,
                duration_ms=duration_ms,
                client=client,
            )
            return
        self._pending.append((time.time(), request_id, method, path, status, seconds, client))
        if len(self._pending) >= self.MAX_PENDING:
            self.flush()
        elif self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_timer = loop.call_later(self.FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        chunk: list[bytes] = []
        size = 0
        for when, request_id, method, path, status, seconds, client in pending:
            line = orjson.dumps(
                {
                    "method": method,
                    "path": path,
                    "status": status,
                    "duration_ms": _milliseconds(seconds),
                    "client": client,
                    "event": "request",
                    "request_id": request_id,
                    "level": "info",
                    "timestamp": iso_timestamp(when),
                }
            )
            if chunk and size + len(line) + 1 > self.CHUNK_BYTES:
                self._emit(chunk)
                chunk, size = [], 0
            chunk.append(line)
            size += len(line) + 1
        self._emit(chunk)

    def _emit(self, lines: list[bytes]) -> None:
        # The logger ends the chunk with the last line's newline.
        chunk = b"\n".join(lines)
        self._raw.msg(chunk if self._writes_bytes else chunk.decode())


def _milliseconds(seconds: float) -> float:
    """A duration in milliseconds to two decimals: the same figure as ``round(ms, 2)``
    but for halves, in less time (round with digits formats the float)."""
    return int(seconds * 100_000 + 0.5) / 100
