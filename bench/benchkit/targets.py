"""Issues 6, 21 and 22's targets, each judged from figures of one run: met or not.

A target is judged on its exact figure. The figure is printed with as many digits as it
takes to read as the side of the bound it is on: 49.96% of the ceiling prints as 49.96%,
not as a 50.0% beside "no". A figure that cannot be computed (its divisor served no
requests, or used no CPU) makes the target unmet, saying why, rather than failing the
report at the end of a run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from benchkit.rows import Row, per
from benchkit.systems import BATCH

# Digits a figure may gain over its usual precision to show which side of its bound it
# is on; a figure closer than that to its bound is printed at this finest precision.
MORE_DIGITS = 4
# A figure is a few divisions of medians away from the measurements, each rounding in the
# last bit: one this close to its bound (relatively) is on it, and meets it.
ON_THE_BOUND = 1e-9


@dataclass(frozen=True, slots=True)
class Bound:
    """A target's limit: its figure must be at least ``limit``, or at most (``at_most``)."""

    limit: float
    at_most: bool = False

    def met(self, value: float) -> bool:
        if math.isclose(value, self.limit, rel_tol=ON_THE_BOUND):
            return True
        return value <= self.limit if self.at_most else value >= self.limit


# Issue 6: guest calls at half the bare-ASGI ceiling, 6 times the Python SDK (8 times its
# stateless JSON since issue 22), 5 times the TS SDK.
GUEST_SHARE = Bound(0.5)
SDK_FACTORS = (
    ("mcp-python", 8, "the Python SDK, stateless JSON"),
    ("mcp-python-2026", 6, "the Python SDK, 2026-07-28 mode"),
    ("mcp-typescript", 5, "the TS SDK"),
)
# Issue 21: a 2026-07-28 call costs no more server CPU than the 2025 call, within the ±5%
# noise that separates two rows of one run on this bench (bench/README.md), and serves 6
# times the SDK answering the same 2026-07-28 body.
MODERN_COST = Bound(1.05, at_most=True)
MODERN_SDK_FACTOR = 6
# Issue 22: signed-in calls at 45% of the ceiling on PostgreSQL, 30% on SQLite; refresh
# grants with 2 workers at least what 1 worker serves; 100 MB a worker.
BEARER_SHARES = (("bearer-pg", "PostgreSQL", Bound(0.45)), ("bearer-sqlite", "SQLite", Bound(0.30)))
BATCH_COST = Bound(1 / 3, at_most=True)
P99_MS = Bound(10, at_most=True)
RSS_MB = Bound(100, at_most=True)
REFRESH_SCALING = Bound(1.0)
TWO_WORKERS = Bound(1.6)
REFRESH_PER_WORKER = Bound(1000)


def figure(value: float, bound: Bound, decimals: int, scale: float = 1) -> str:
    """``value * scale`` with ``decimals`` digits, or more where fewer would read as the
    other side of ``bound`` than ``value`` is on."""
    met = bound.met(value)
    for places in range(decimals, decimals + MORE_DIGITS + 1):
        text = f"{value * scale:,.{places}f}"
        if bound.met(float(text.replace(",", "")) / scale) == met:
            break
    return text


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    measured: str
    met: bool


def judged(
    name: str, value: float | None, bound: Bound, decimals: int, shown: str, scale: float = 1
) -> Target:
    """The target, its figure printed in ``shown`` at ``{}``; one that could not be
    computed is not met."""
    if value is None:
        return Target(name, "no figure: a run it divides by served nothing", met=False)
    text = shown.replace("{}", figure(value, bound, decimals, scale), 1)
    return Target(name, text, bound.met(value))


def round_ratios(top: Row, bottom: Row) -> str:
    """The ratio's range over the rounds, each round's figure over the same round's: when
    the host's own noise moves a ratio across its target, this shows it."""
    bottoms = {m.round: m.rps for m in bottom.runs}
    ratios = [m.rps / bottoms[m.round] for m in top.runs if bottoms.get(m.round)]
    if len(ratios) < 2:
        return ""
    return f" (rounds {min(ratios):.1%}–{max(ratios):.1%})"


def round_cpu_ratios(top: Row, bottom: Row) -> str:
    """``top``'s server CPU per request over ``bottom``'s, round by round."""
    bottoms = {m.round: m.server_cpu / m.rps for m in bottom.runs if m.rps}
    ratios = [
        (m.server_cpu / m.rps) / bottoms[m.round]
        for m in top.runs
        if m.rps and bottoms.get(m.round)
    ]
    if len(ratios) < 2:
        return ""
    return f" (rounds {min(ratios):.2f}–{max(ratios):.2f}×)"


def _share(name: str, row: Row, ceiling: Row, bound: Bound) -> Target:
    shown = "{}%" + round_ratios(row, ceiling)
    return judged(name, per(row.rps, ceiling.rps), bound, 1, shown, scale=100)


def _times(name: str, row: Row, other: Row, factor: float) -> Target:
    return judged(name, per(row.rps, other.rps), Bound(factor), 2, "{}×")


def _modern_cost(modern: Row, guest: Row) -> Target:
    name = "guest tools/call at 2026-07-28: server CPU per request ≤ 1.05× the 2025 call's"
    modern_us, guest_us = modern.cpu_us, guest.cpu_us
    if modern_us is None or guest_us is None:
        return judged(name, None, MODERN_COST, 2, "{}×")
    shown = f"{{}}× ({modern_us:.0f} against {guest_us:.0f} µs){round_cpu_ratios(modern, guest)}"
    return judged(name, per(modern_us, guest_us), MODERN_COST, 2, shown)


def targets(rows: Mapping[str, Row]) -> list[Target]:
    """Every target whose scenarios this run measured, by scenario key."""
    found: list[Target] = []
    ceiling, guest = rows.get("ceiling"), rows.get("guest-call")
    if ceiling and guest:
        name = "guest tools/call ≥ 50% of the ceiling"
        found.append(_share(name, guest, ceiling, GUEST_SHARE))
        for key, factor, what in SDK_FACTORS:
            other = rows.get(key)
            if other:
                found.append(_times(f"guest tools/call ≥ {factor}× {what}", guest, other, factor))
    modern, sdk_modern = rows.get("guest-call-2026"), rows.get("mcp-python-2026")
    if guest and modern:
        found.append(_modern_cost(modern, guest))
    if modern and sdk_modern:
        name = "guest tools/call at 2026-07-28 ≥ 6× the Python SDK, 2026-07-28 mode"
        found.append(_times(name, modern, sdk_modern, MODERN_SDK_FACTOR))
    for key, database, share in BEARER_SHARES:
        bearer = rows.get(key)
        if ceiling and bearer:
            name = f"signed-in tools/call on {database} ≥ {share.limit:.0%} of the ceiling"
            found.append(_share(name, bearer, ceiling, share))
    batch = rows.get("guest-batch")
    if guest and batch:
        # A batched call's share of a single-request call's time: 1 / (calls/s in batches)
        # over 1 / (single calls/s).
        name = f"a batch of {BATCH} costs ≤ 1/3 per request of {BATCH} single requests"
        cost = per(guest.rps, batch.rps * BATCH)
        found.append(judged(name, cost, BATCH_COST, 2, "{} per call"))
    for key in ("guest-call", "bearer-pg"):
        row = rows.get(key)
        if row:
            name = f"p99 ≤ 10 ms: {row.scenario.label}, {row.server.label}"
            found.append(judged(name, row.p99, P99_MS, 1, "{} ms"))
    frontdesk = [row for row in rows.values() if row.server.kind == "frontdesk"]
    if frontdesk:
        worst = max(frontdesk, key=lambda row: row.rss)
        name, shown = "RSS ≤ 100 MB per worker after the run", "largest: {} MB"
        found.append(judged(name, worst.rss, RSS_MB, 0, f"{shown} ({worst.server.label})"))
    for one, two in SCALING_PAIRS:
        single, double = rows.get(one), rows.get(two)
        if single and double:
            name = f"2 workers ≥ 1.6× one worker: {single.scenario.label}, PostgreSQL"
            found.append(_times(name, double, single, TWO_WORKERS.limit))
    refresh, refresh_2w = rows.get("refresh-pg"), rows.get("refresh-pg-2w")
    if refresh and refresh_2w:
        name = "refresh grants on PostgreSQL: 2 workers ≥ 1 worker"
        found.append(_times(name, refresh_2w, refresh, REFRESH_SCALING.limit))
    for key in ("refresh-pg", "refresh-pg-2w"):
        row = rows.get(key)
        if row:
            name = f"refresh grants on PostgreSQL ≥ 1,000/s per worker ({row.server.label})"
            rate = row.rps / row.server.workers
            found.append(judged(name, rate, REFRESH_PER_WORKER, 0, "{}/s per worker"))
    return found


SCALING_PAIRS = (("guest-call-pg", "guest-call-pg-2w"), ("bearer-pg", "bearer-pg-2w"))


@dataclass(frozen=True, slots=True)
class ScalingBound:
    """The most 2 workers could give over 1 on two cores that wrk shares, were a request to
    cost each worker no more than it cost the single worker on a core of its own."""

    label: str
    server_us: float  # 1 worker's CPU per request
    wrk_us: float  # wrk's CPU per request in the 2-worker runs, taken from the same 2 cores

    @property
    def times(self) -> float:
        # 1 worker: 1 core / server_us. 2 workers: 2 cores / (server_us + wrk_us).
        return 2 * self.server_us / (self.server_us + self.wrk_us)


def scaling_bounds(rows: Mapping[str, Row]) -> list[ScalingBound]:
    """The bound for each 1-worker/2-worker pair measured; none where a cost is unknown."""
    found = []
    for one, two in SCALING_PAIRS:
        single, double = rows.get(one), rows.get(two)
        if single and double:
            server_us = single.cpu_us
            wrk = per(double.wrk_cpu, double.rps)
            if server_us and wrk is not None:
                found.append(ScalingBound(single.scenario.label, server_us, wrk * 1e6))
    return found


def ceiling_scaling(rows: Mapping[str, Row]) -> float | None:
    """2 workers ÷ 1 worker for the bare-ASGI ceiling: what this machine allows at all."""
    single, double = rows.get("ceiling"), rows.get("ceiling-2w")
    if single is None or double is None:
        return None
    return per(double.rps, single.rps)
