"""A scenario's measured rounds, summed up as the report prints them: medians of the rounds."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchkit.load import Measurement
from benchkit.systems import SERVER_BY_KEY, Scenario, Server


def per(amount: float, count: float) -> float | None:
    """``amount`` per ``count``; None when there is nothing to divide by (a run that served
    no requests, or a server that used no CPU), so no figure is made up from it."""
    return amount / count if count > 0 else None


@dataclass(frozen=True, slots=True)
class Row:
    scenario: Scenario
    runs: list[Measurement]

    @property
    def server(self) -> Server:
        return SERVER_BY_KEY[self.scenario.server]

    @property
    def rps(self) -> float:
        return statistics.median(m.rps for m in self.runs)

    @property
    def low(self) -> float:
        return min(m.rps for m in self.runs)

    @property
    def high(self) -> float:
        return max(m.rps for m in self.runs)

    @property
    def p50(self) -> float:
        return statistics.median(m.p50_ms for m in self.runs)

    @property
    def p99(self) -> float:
        return statistics.median(m.p99_ms for m in self.runs)

    @property
    def rss(self) -> float:
        return self.runs[-1].rss_worker_mb

    @property
    def server_cpu(self) -> float:
        return statistics.median(m.server_cpu for m in self.runs)

    @property
    def cpu_us(self) -> float | None:
        """Server CPU time per request, in µs, from the medians (as the table prints it)."""
        cost = per(self.server_cpu, self.rps)
        return None if cost is None else cost * 1e6

    @property
    def other_cpu(self) -> float:
        return statistics.median(m.other_cpu for m in self.runs)

    @property
    def postgres_cpu(self) -> float:
        return statistics.median(m.postgres_cpu for m in self.runs)

    @property
    def wrk_cpu(self) -> float:
        return statistics.median(m.wrk_cpu for m in self.runs)

    @property
    def errors(self) -> int:
        return sum(m.errors + m.socket_errors for m in self.runs)

    @property
    def pg_sessions_per_second(self) -> float | None:
        found = [m.pg_sessions / m.seconds for m in self.runs if m.pg_sessions is not None]
        return statistics.median(found) if found else None


def rows_of(scenarios: Sequence[Scenario], measurements: Sequence[Measurement]) -> list[Row]:
    """One row per scenario that was measured, in the scenarios' order."""
    rows = []
    for scenario in scenarios:
        runs = [m for m in measurements if m.scenario == scenario.key]
        if runs:
            rows.append(Row(scenario, runs))
    return rows
