"""A company's usage over a range of hours, per tool and in total, as JSON.

Read from the hourly rollup (store.tool_usage), so it is the same from every instance and
holds every worker's flushed counts. The range is whole hours: ``since`` is taken back to
the start of its hour and ``until`` (exclusive) forward to the end of its own, so a range
never splits an hour it cannot see inside.

Latency percentiles are read from the summed buckets as Prometheus's
``histogram_quantile`` reads a histogram: the bucket the rank falls in, and a straight line
between its bounds. They are over the calls that reached their tool's provider: a call
refused before it (invalid arguments, a guest at a personal tool, a client that cannot
answer) is counted, but has no latency.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from frontdesk.errors import FrontdeskError
from frontdesk.store import tool_usage
from frontdesk.store.database import Database
from frontdesk.store.tables import LATENCY_BOUNDS_MS
from frontdesk.usage.counters import ERROR_KINDS, OK

HOUR = timedelta(hours=1)
# Without ``since``, the day before ``until``.
DEFAULT_SPAN = timedelta(hours=24)
# The longest range one report reads: a retention period's worth of hours.
MAX_RANGE = timedelta(days=3660)


class InvalidRange(FrontdeskError):
    """The range asked for is empty, reversed, or too long."""


def chosen_range(
    since: datetime | None, until: datetime | None, now: datetime
) -> tuple[datetime, datetime]:
    """The whole hours of a range asked for (``hour_range``): ``until`` now unless given,
    ``since`` ``DEFAULT_SPAN`` before ``until`` unless given."""
    end = now if until is None else until
    try:
        start = end - DEFAULT_SPAN if since is None else since
    except OverflowError:
        raise InvalidRange("until is out of range") from None
    return hour_range(start, end)


def hour_range(since: datetime, until: datetime) -> tuple[datetime, datetime]:
    """``since`` back to its hour's start, ``until`` forward to its hour's end, in UTC;
    InvalidRange when nothing is left between them or they are too far apart."""
    if since.tzinfo is None or until.tzinfo is None:
        raise InvalidRange("since and until must say their time zone (UTC: ...Z)")
    try:
        start = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        end = until.astimezone(UTC)
        if end.replace(minute=0, second=0, microsecond=0) != end:
            end = end.replace(minute=0, second=0, microsecond=0) + HOUR
    except OverflowError:
        raise InvalidRange("since and until must be within years 1 to 9999") from None
    if end <= start:
        raise InvalidRange("until must come after since")
    if end - start > MAX_RANGE:
        raise InvalidRange(f"the range may span at most {MAX_RANGE.days} days")
    return start, end


def percentile(buckets: Sequence[int], quantile: float) -> float | None:
    """The latency below which ``quantile`` of the counted calls fell, in milliseconds,
    from counts per bucket (``LATENCY_BOUNDS_MS``, then one over the last bound); None when
    nothing was counted. A rank in the last bucket, which has no upper bound, reads as the
    last bound (as Prometheus does)."""
    total = sum(buckets)
    if total == 0:
        return None
    rank = quantile * total
    below = 0
    for index, count in enumerate(buckets):
        if count and below + count >= rank:
            if index == len(LATENCY_BOUNDS_MS):
                return float(LATENCY_BOUNDS_MS[-1])
            lower = 0.0 if index == 0 else float(LATENCY_BOUNDS_MS[index - 1])
            upper = float(LATENCY_BOUNDS_MS[index])
            return round(lower + (upper - lower) * (rank - below) / count, 2)
        below += count
    return float(LATENCY_BOUNDS_MS[-1])  # pragma: no cover - the loop always returns


class _Figures:
    """One tool's (or the company's) figures, as they are added up."""

    def __init__(self) -> None:
        self.calls = 0
        self.by_outcome = dict.fromkeys((OK, *ERROR_KINDS), 0)
        self.guest = 0
        self.signed_in = 0
        self.timed = 0
        self.latency_ms_sum = 0.0
        self.buckets = [0] * (len(LATENCY_BOUNDS_MS) + 1)

    def add(self, row: tool_usage.UsageRow) -> None:
        self.calls += row.calls
        # An outcome this version does not know (a newer instance's) counts as an error.
        outcome = row.outcome if row.outcome in self.by_outcome else "backend_error"
        self.by_outcome[outcome] += row.calls
        if row.signed_in:
            self.signed_in += row.calls
        else:
            self.guest += row.calls
        self.latency_ms_sum += row.latency_ms_sum
        for index, count in enumerate(row.buckets):
            self.buckets[index] += count
            self.timed += count

    def to_json(self, customers: int) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.by_outcome[OK],
            "errors": {kind: self.by_outcome[kind] for kind in ERROR_KINDS},
            "guest_calls": self.guest,
            "signed_in_calls": self.signed_in,
            "distinct_customers": customers,
            "latency_ms": {
                "timed_calls": self.timed,
                "mean": round(self.latency_ms_sum / self.timed, 2) if self.timed else None,
                "p50": percentile(self.buckets, 0.5),
                "p95": percentile(self.buckets, 0.95),
            },
        }


async def read_usage(
    database: Database, tenant_key: str, since: datetime, until: datetime
) -> dict[str, Any]:
    """The company's usage from ``since`` to ``until`` (exclusive), whole hours: per tool
    (sorted by name) and in total. JSON-ready."""
    start, end = hour_range(since, until)
    found = await tool_usage.read(database.engine, tenant_key, start, end)
    tools: dict[str, _Figures] = {}
    total = _Figures()
    for row in found.rows:
        tools.setdefault(row.tool, _Figures()).add(row)
        total.add(row)
    return {
        "tenant_key": tenant_key,
        "since": _iso(start),
        "until": _iso(end),
        "tools": [
            {"tool": name, **figures.to_json(found.customers_by_tool.get(name, 0))}
            for name, figures in sorted(tools.items())
        ],
        "totals": total.to_json(found.customers),
    }


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
