"""Structured JSON logs carrying the request id. (The access log is the edge's,
``web.access_log``; the Prometheus metrics are ``metrics``.)"""

from __future__ import annotations

import logging
import sys
import time
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson
import structlog

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
