"""Structured JSON logs carrying the request id, and the Prometheus metrics."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any

import orjson
import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram


def _orjson_text(value: Any, **_options: Any) -> str:
    return orjson.dumps(value).decode()


def configure_logging(level: str = "INFO", json: bool = True) -> None:
    processors: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
    ]
    wrapper = structlog.make_filtering_bound_logger(logging.getLevelName(level.upper()))
    if json:
        # orjson renders a line several times faster than the standard library, and a line
        # is written on every request. Bytes go straight to the stream's buffer when it has
        # one (a real stderr); a text-only stream (a test's capture) gets the decoded line.
        buffer = getattr(sys.stderr, "buffer", None)
        if buffer is not None:
            structlog.configure(
                processors=[*processors, structlog.processors.JSONRenderer(orjson.dumps)],
                wrapper_class=wrapper,
                logger_factory=structlog.BytesLoggerFactory(buffer),
                cache_logger_on_first_use=True,
            )
            return
        structlog.configure(
            processors=[*processors, structlog.processors.JSONRenderer(_orjson_text)],
            wrapper_class=wrapper,
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
            cache_logger_on_first_use=True,
        )
        return
    structlog.configure(
        processors=[*processors, structlog.dev.ConsoleRenderer(colors=False)],
        wrapper_class=wrapper,
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )


class AccessLog:
    """One JSON line per answered request, in the same shape as every other log line.

    It is written on every request, so it skips structlog's processor chain (context
    copying, timestamp formatting and rendering cost more than the request itself on the
    MCP hot path) and renders straight with orjson. With ``json`` off it goes through
    structlog's console renderer, for people reading a terminal.
    """

    def __init__(self, json: bool) -> None:
        self._json = json
        self._console = structlog.get_logger("frontdesk.access")
        # The same destination as every other line: the configured logger, unprocessed.
        self._raw = structlog.get_config()["logger_factory"]()
        self._writes_bytes = isinstance(self._raw, structlog.BytesLogger)

    def write(self, request_id: str, method: str, path: str, status: int, ms: float) -> None:
        if not self._json:
            self._console.info("request", method=method, path=path, status=status, duration_ms=ms)
            return
        line = orjson.dumps(
            {
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": ms,
                "event": "request",
                "request_id": request_id,
                "level": "info",
                "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            }
        )
        if self._writes_bytes:
            self._raw.msg(line)
        else:
            self._raw.msg(line.decode())


class Metrics:
    """One registry per application, so that tests and several apps never share counters."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "frontdesk_http_requests",
            "HTTP requests answered, by route and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "frontdesk_http_request_duration_seconds",
            "Time to answer an HTTP request, by route.",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
            registry=self.registry,
        )
        # Children by label values; the label sets are bounded (see edge.route_label).
        self._counters: dict[tuple[str, str, int], Any] = {}
        self._histograms: dict[str, Any] = {}

    def record(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request. Label children are kept, as looking them up by
        labels costs more than the increment itself."""
        key = (route, method, status)
        counter = self._counters.get(key)
        if counter is None:
            counter = self._counters[key] = self.requests.labels(route, method, str(status))
        histogram = self._histograms.get(route)
        if histogram is None:
            histogram = self._histograms[route] = self.duration.labels(route)
        counter.inc()
        histogram.observe(seconds)
