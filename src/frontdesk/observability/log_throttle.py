"""Warnings that an outage repeats on every request, written at most once per interval.

During a database outage every request fails the same way; a line per request wrote
thousands of identical warnings in ten seconds, which hid everything else in the log and
cost the workers time they had little of. A kind of warning (its event name) is written at
most once per ``INTERVAL_SECONDS`` per process; the lines held back are counted, and the
next line of that kind carries the count as ``suppressed``, so the log still tells how
many there were.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

INTERVAL_SECONDS = 5.0


class WarningLogger(Protocol):
    def warning(self, event: str, **fields: Any) -> Any: ...


class _Kind:
    __slots__ = ("quiet_until", "suppressed")

    def __init__(self, quiet_until: float) -> None:
        self.quiet_until = quiet_until
        self.suppressed = 0


class LogThrottle:
    """One line per kind and interval. The kinds are event names written in the code, a
    fixed few, so what is kept per kind never grows with traffic."""

    def __init__(
        self, interval: float = INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.interval = interval
        self._clock = clock
        self._kinds: dict[str, _Kind] = {}

    def warning(self, logger: WarningLogger, event: str, **fields: Any) -> None:
        """``logger.warning(event, **fields)``, unless a line of this kind was written less
        than an interval ago; then it is only counted."""
        now = self._clock()
        kind = self._kinds.get(event)
        if kind is not None and now < kind.quiet_until:
            kind.suppressed += 1
            return
        suppressed = kind.suppressed if kind is not None else 0
        self._kinds[event] = _Kind(now + self.interval)
        if suppressed:
            fields["suppressed"] = suppressed
        logger.warning(event, **fields)

    def clear(self) -> None:
        """Forget every kind: the next line of each is written at once, with no count."""
        self._kinds.clear()


# The one every outage warning goes through: a database outage shows in several layers
# (MCP, OAuth, readiness), each with a line of its own kind.
outage_warnings = LogThrottle()
