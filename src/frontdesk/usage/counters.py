"""A worker's tool-call counts not yet written: what a ``tools/call`` costs for usage.

A call is counted under (company, tool, hour, outcome, signed in or not): how many, the sum
of their latencies, and the latencies in fixed buckets (store.tables.LATENCY_BOUNDS_MS);
the customers who called each tool in each hour are kept by subject. Counting is a few
dictionary updates on the event loop's own thread: no I/O, no lock, no clock but the wall
clock's hour (the call's latency is the one its time limit already measured). The flusher
(usage.flushing) takes the counts away whole every few seconds and gives them back when the
database refused them, within ``MAX_KEYS`` and ``MAX_CUSTOMERS``.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Final

from frontdesk.store.tables import LATENCY_BOUNDS_MS

# How a call ended, a closed set (docs/design.md, "Usage"):
OK: Final = "ok"
# The tool answered with an error for the customer: an isError result, or a ToolError its
# provider raised (an API's 4xx or 5xx, an order that is not theirs).
TOOL_ERROR: Final = "tool_error"
# Frontdesk got no usable answer: the provider raised something else, or answered outside
# the tool's declared output schema.
BACKEND_ERROR: Final = "backend_error"
# The tool's time limit passed, or its backend's connection timed out.
TIMEOUT: Final = "timeout"
# The provider could not be loaded, or its backend could not be reached or was refused by
# the address policy.
UNAVAILABLE: Final = "unavailable"
# Refused before the provider: arguments the input schema refuses, a guest at a personal
# tool, a client that cannot answer what the tool needs to ask.
INVALID_ARGUMENTS: Final = "invalid_arguments"
UNAUTHORIZED: Final = "unauthorized"
UNSUPPORTED_CLIENT: Final = "unsupported_client"
ERROR_KINDS = (
    TOOL_ERROR,
    BACKEND_ERROR,
    TIMEOUT,
    UNAVAILABLE,
    INVALID_ARGUMENTS,
    UNAUTHORIZED,
    UNSUPPORTED_CLIENT,
)
OUTCOMES = (OK, *ERROR_KINDS)

# A count's key: tenant key, tool, hour (seconds since the epoch, a multiple of 3600),
# outcome, signed in.
TallyKey = tuple[str, str, int, str, bool]
# The customers' key: tenant key, tool, hour.
CustomersKey = tuple[str, str, int]
# calls, latency sum in ms, then one count per bucket (len(LATENCY_BOUNDS_MS) + 1).
Tally = list[float]
TALLY_LENGTH = 2 + len(LATENCY_BOUNDS_MS) + 1

# What a worker keeps while the database refuses its flushes: keys (about 300 bytes each)
# and customer subjects. Past either, the oldest hours go first, with a warning.
MAX_KEYS = 50_000
MAX_CUSTOMERS = 200_000


@dataclass(slots=True)
class Counts:
    """Counts taken from a worker, to be written together."""

    tallies: dict[TallyKey, Tally] = field(default_factory=dict)
    customers: dict[CustomersKey, set[str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.tallies or self.customers)


class UsageCounters:
    """One per application: every call of its MCP endpoint is counted here."""

    def __init__(self, max_keys: int = MAX_KEYS, max_customers: int = MAX_CUSTOMERS) -> None:
        self._counts = Counts()
        self._max_keys = max_keys
        self._max_customers = max_customers

    def record(
        self,
        tenant_key: str,
        tool: str,
        outcome: str,
        subject: str | None,
        seconds: float | None = None,
    ) -> None:
        """Count one call; ``subject`` is the signed-in customer's, ``seconds`` its latency
        (None for a call refused before its provider, which has none)."""
        hour = int(time.time()) // 3600 * 3600
        key = (tenant_key, tool, hour, outcome, subject is not None)
        tallies = self._counts.tallies
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = [0.0] * TALLY_LENGTH
        tally[0] += 1
        if seconds is not None:
            milliseconds = seconds * 1000.0
            tally[1] += milliseconds
            # At most the bound: a bucket is "le", as Prometheus's.
            tally[2 + bisect_left(LATENCY_BOUNDS_MS, milliseconds)] += 1
        if subject is not None:
            customers = self._counts.customers
            seen = customers.get((tenant_key, tool, hour))
            if seen is None:
                customers[(tenant_key, tool, hour)] = {subject}
            else:
                seen.add(subject)

    def take(self) -> Counts:
        """Everything counted so far; counting starts afresh."""
        taken, self._counts = self._counts, Counts()
        return taken

    def give_back(self, counts: Counts) -> tuple[int, int]:
        """Add counts a flush could not write to those counted since, and keep within the
        bounds by dropping the oldest hours; the keys and customers dropped."""
        current = self._counts
        for key, tally in counts.tallies.items():
            kept = current.tallies.get(key)
            if kept is None:
                current.tallies[key] = tally
            else:
                for index, value in enumerate(tally):
                    kept[index] += value
        for hour_key, subjects in counts.customers.items():
            current.customers.setdefault(hour_key, set()).update(subjects)
        return self._trim()

    def pending(self) -> int:
        """Keys counted and not yet written."""
        return len(self._counts.tallies)

    def _trim(self) -> tuple[int, int]:
        tallies, customers = self._counts.tallies, self._counts.customers
        dropped_keys = 0
        if len(tallies) > self._max_keys:
            for key in sorted(tallies, key=lambda key: key[2])[: len(tallies) - self._max_keys]:
                del tallies[key]
                dropped_keys += 1
        dropped_customers = 0
        held = sum(len(subjects) for subjects in customers.values())
        for hour_key in sorted(customers, key=lambda key: key[2]):
            if held <= self._max_customers:
                break
            count = len(customers.pop(hour_key))
            held -= count
            dropped_customers += count
        return dropped_keys, dropped_customers
