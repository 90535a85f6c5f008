"""Structured JSON logs carrying the request id, and the access log. (The Prometheus
metrics are metrics.py's.)"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson
import structlog

from frontdesk.asgi import Scope
from frontdesk.network import ClientAddressResolver

# The request being answered, for every log line written while it is: set by the edge for
# each request. A context variable of our own rather than structlog's bound context, whose
# bind and unbind cost more than the rest of the edge's bookkeeping on the hot path.
REQUEST_ID: ContextVar[str | None] = ContextVar("frontdesk_request_id", default=None)


# The second last formatted and its text, as one tuple: a thread writing a line meanwhile
# reads both or neither, never one second's text with another's number.
_formatted_second: tuple[int, str] = (-1, "")


def iso_timestamp(now: float) -> str:
    """``now`` (seconds since the epoch) in ISO 8601, UTC, to the microsecond:
    ``2026-11-21T23:56:25.686711Z``, the form structlog's ``TimeStamper(fmt="iso",
    utc=True)`` writes, with the fraction always six digits long.

    Every log line carries one, and the access log writes a line per request: formatting
    a datetime costs more than the rest of a line, so the date and time of day are
    formatted once per second and only the fraction per line (docs/decisions/access-log.md
    has the figures, and why this is below the bar for code of our own)."""
    global _formatted_second
    second = int(now)
    formatted, text = _formatted_second
    if second != formatted:
        text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _formatted_second = (second, text)
    # %-formatting truncates the microseconds itself, faster than int() in an f-string.
    return "%s.%06dZ" % (text, (now - second) * 1_000_000)  # noqa: UP031


def add_timestamp(
    _logger: Any, _method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    event_dict["timestamp"] = iso_timestamp(time.time())
    return event_dict


def add_request_id(
    _logger: Any, _method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    request_id = REQUEST_ID.get()
    if request_id is not None:
        event_dict.setdefault("request_id", request_id)
    return event_dict


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is written, not what it was when logging was
    configured.

    structlog's loggers keep the stream they were made with, and ours are cached on first
    use: a stream swapped in later (a test's output capture, an application embedding this
    one) would otherwise never see a line, and one swapped out and closed would fail every
    write after. JSON lines come rendered as bytes (orjson) and go to the stream's buffer
    when it has one (a real stderr), decoded when it has not; console lines are text.
    """

    def write(self, data: bytes | str) -> None:
        stream = sys.stderr
        if isinstance(data, bytes):
            buffer = getattr(stream, "buffer", None)
            if buffer is not None:
                buffer.write(data)
                return
            data = data.decode()
        stream.write(data)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "INFO", json: bool = True) -> None:
    processors: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        add_request_id,
        structlog.processors.add_log_level,
        add_timestamp,
        structlog.processors.format_exc_info,
    ]
    stream = _CurrentStderr()
    logger_factory: structlog.BytesLoggerFactory | structlog.PrintLoggerFactory
    if json:
        # orjson renders a line faster than the standard library, and a line is written on
        # every request.
        processors.append(structlog.processors.JSONRenderer(orjson.dumps))
        logger_factory = structlog.BytesLoggerFactory(stream)  # type: ignore[arg-type]
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=False))
        logger_factory = structlog.PrintLoggerFactory(stream)  # type: ignore[arg-type]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=logger_factory,
        cache_logger_on_first_use=True,
    )


class JsonLogFormatter(logging.Formatter):
    """Standard-library log records (Granian's own, and any library's) as the JSON lines
    every other log line is: the message as ``event``, with ``level``, ``timestamp`` and
    ``logger``, and a traceback as ``exception``. A plain logging formatter, named in the
    configuration Granian takes (``log_dictconfig``), so nothing of Granian is reached into."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "event": record.getMessage(),
            "logger": record.name,
            "level": record.levelname.lower(),
            "timestamp": iso_timestamp(record.created),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode()


def stdlib_log_config(level: str = "WARNING") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` that writes every standard-library record at
    ``level`` or above to stderr as JSON: Granian's loggers (``_granian``, whose records
    its Rust core shares, and ``granian.access``) and the root logger, which any other
    library's records reach. Granian replaces each top-level key of its own configuration
    with this one's, so its loggers are named here in full."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    own = {"handlers": ["json"], "level": level, "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.{JsonLogFormatter.__qualname__}"}},
        "handlers": {"json": handler},
        "loggers": {"_granian": dict(own), "granian.access": dict(own)},
        "root": {"handlers": ["json"], "level": level},
    }


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
