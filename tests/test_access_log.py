"""The access log: one JSON line per request, rendered and written in runs of lines."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import structlog

from frontdesk.web.access_log import AccessLog


class Writes(io.BytesIO):
    """A stream that remembers each write, as the pipe of a worker's stderr would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: Any) -> int:
        self.writes.append(bytes(data))
        return super().write(data)


@pytest.fixture
def stream() -> Iterator[Writes]:
    stream = Writes()
    structlog.configure(logger_factory=structlog.BytesLoggerFactory(stream))
    try:
        yield stream
    finally:
        structlog.reset_defaults()


def lines_of(stream: Writes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in stream.getvalue().splitlines()]


async def test_lines_wait_for_the_flush_and_keep_the_time_of_their_request(
    stream: Writes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is written per request; the flush writes each line stamped when it was
    answered, in the shape of every other log line, its duration in milliseconds to two
    decimals."""
    access = AccessLog(json=True)
    now = [1_700_000_000.25]
    monkeypatch.setattr(time, "time", lambda: now[0])
    access.write("first", "POST", "/v1/acme/mcp", 200, 0.000_424_9, "192.0.2.1")
    now[0] += 1.25
    access.write("second", "GET", "/healthz", 503, 0.000_999_6, "192.0.2.1")
    now[0] += 30
    assert stream.writes == []
    access.flush()
    assert lines_of(stream) == [
        {
            "method": "POST",
            "path": "/v1/acme/mcp",
            "status": 200,
            "duration_ms": 0.42,
            "client": "192.0.2.1",
            "event": "request",
            "request_id": "first",
            "level": "info",
            "timestamp": "2023-11-14T22:13:20.250000Z",
        },
        {
            "method": "GET",
            "path": "/healthz",
            "status": 503,
            "duration_ms": 1.0,
            "client": "192.0.2.1",
            "event": "request",
            "request_id": "second",
            "level": "info",
            "timestamp": "2023-11-14T22:13:21.500000Z",
        },
    ]


async def test_pending_lines_are_written_within_the_flush_interval(stream: Writes) -> None:
    """A quiet worker still writes its last lines, FLUSH_SECONDS after the first of them."""
    access = AccessLog(json=True)
    access.write("late", "POST", "/v1/acme/mcp", 200, 0.000_1, "192.0.2.1")
    await asyncio.sleep(AccessLog.FLUSH_SECONDS * 3)
    assert [line["request_id"] for line in lines_of(stream)] == ["late"]


async def test_a_busy_worker_writes_every_max_pending_lines(stream: Writes) -> None:
    """Lines held in memory stay bounded however fast requests come."""
    access = AccessLog(json=True)
    for number in range(AccessLog.MAX_PENDING):
        access.write(f"r{number}", "POST", "/v1/acme/mcp", 200, 0.000_1, "192.0.2.1")
    assert len(lines_of(stream)) == AccessLog.MAX_PENDING
    access.flush()


async def test_each_write_holds_whole_lines_within_pipe_buf(stream: Writes) -> None:
    """Workers sharing a pipe never interleave inside a line: every write is at most
    PIPE_BUF bytes and ends with a line's end."""
    access = AccessLog(json=True)
    pending = [f"request-{number:04d}" for number in range(AccessLog.MAX_PENDING - 1)]
    for request_id in pending:
        access.write(request_id, "POST", "/v1/acme/mcp", 200, 0.000_1, "192.0.2.1")
    assert stream.writes == []
    access.flush()
    assert len(stream.writes) > 1
    for write in stream.writes:
        assert len(write) <= AccessLog.CHUNK_BYTES
        assert write.endswith(b"\n")
    assert [line["request_id"] for line in lines_of(stream)] == pending


def test_outside_an_event_loop_a_line_is_written_at_once(stream: Writes) -> None:
    """With no loop to schedule the flush on (a script, a test), nothing waits."""
    access = AccessLog(json=True)
    access.write("now", "GET", "/", 200, 0.000_1, "192.0.2.1")
    assert [line["request_id"] for line in lines_of(stream)] == ["now"]
