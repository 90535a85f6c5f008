"""Outage warnings at most once per kind and interval, with a count of the rest
(frontdesk.observability.log_throttle)."""

from __future__ import annotations

from typing import Any

from frontdesk.observability.log_throttle import LogThrottle


class Recorder:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append((event, fields))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_repeats_within_the_interval_are_counted_into_the_next_line() -> None:
    """The first line is written at once; the next, an interval later, says how many were
    held back in between."""
    clock, log = Clock(), Recorder()
    throttle = LogThrottle(interval=5.0, clock=clock)
    for _ in range(200):
        throttle.warning(log, "database_unavailable", error="TimeoutError")
        clock.now += 0.01
    assert log.lines == [("database_unavailable", {"error": "TimeoutError"})]
    clock.now += 5.0
    throttle.warning(log, "database_unavailable", error="ConnectionError")
    assert log.lines[1] == (
        "database_unavailable",
        {"error": "ConnectionError", "suppressed": 199},
    )
    clock.now += 5.0
    throttle.warning(log, "database_unavailable", error="ConnectionError")
    assert log.lines[2] == ("database_unavailable", {"error": "ConnectionError"})


def test_each_kind_has_its_own_interval() -> None:
    """A flood of one kind does not silence another."""
    clock, log = Clock(), Recorder()
    throttle = LogThrottle(interval=5.0, clock=clock)
    throttle.warning(log, "database_unavailable")
    throttle.warning(log, "database_unavailable")
    throttle.warning(log, "not_ready", reason="TimeoutError")
    assert [event for event, _fields in log.lines] == ["database_unavailable", "not_ready"]


def test_clear_forgets_every_kind() -> None:
    clock, log = Clock(), Recorder()
    throttle = LogThrottle(interval=5.0, clock=clock)
    throttle.warning(log, "not_ready")
    throttle.warning(log, "not_ready")
    throttle.clear()
    throttle.warning(log, "not_ready")
    assert log.lines == [("not_ready", {}), ("not_ready", {})]
