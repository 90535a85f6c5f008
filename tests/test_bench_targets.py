"""The bench's target arithmetic (bench/benchkit/targets.py): each target's figure and
verdict from measured rounds, with missing scenarios, zero figures and figures at the bound."""

from __future__ import annotations

import math

import pytest

from benchkit.load import Measurement
from benchkit.report import results_table
from benchkit.rows import Row
from benchkit.systems import SCENARIOS
from benchkit.targets import (
    Bound,
    Target,
    ceiling_scaling,
    figure,
    round_cpu_ratios,
    round_ratios,
    scaling_bounds,
    targets,
)

SCENARIO = {scenario.key: scenario for scenario in SCENARIOS}


def measured(
    key: str,
    rps: float,
    *,
    round_number: int = 1,
    p99_ms: float = 2.0,
    rss_mb: float = 50.0,
    server_cpu: float = 1.0,
    wrk_cpu: float = 0.5,
) -> Measurement:
    return Measurement(
        scenario=key,
        round=round_number,
        seconds=8.0,
        requests=int(rps * 8),
        rps=rps,
        p50_ms=1.0,
        p90_ms=1.5,
        p99_ms=p99_ms,
        max_ms=20.0,
        errors=0,
        socket_errors=0,
        rss_worker_mb=rss_mb,
        rss_total_mb=rss_mb,
        server_cpu=server_cpu,
        wrk_cpu=wrk_cpu,
        postgres_cpu=0.0,
        other_cpu=0.0,
        pg_sessions=None,
    )


def row(key: str, *runs: Measurement) -> Row:
    return Row(SCENARIO[key], list(runs))


def one(
    key: str,
    rps: float,
    *,
    p99_ms: float = 2.0,
    rss_mb: float = 50.0,
    server_cpu: float = 1.0,
    wrk_cpu: float = 0.5,
) -> Row:
    """A scenario measured in one round."""
    figures = measured(
        key, rps, p99_ms=p99_ms, rss_mb=rss_mb, server_cpu=server_cpu, wrk_cpu=wrk_cpu
    )
    return row(key, figures)


def by_key(*rows: Row) -> dict[str, Row]:
    return {found.scenario.key: found for found in rows}


def target(rows: dict[str, Row], starts: str) -> Target:
    (found,) = [t for t in targets(rows) if t.name.startswith(starts)]
    return found


# The figures --------------------------------------------------------------------------


def test_a_figure_gains_digits_only_where_fewer_would_read_as_the_other_side() -> None:
    at_least_half = Bound(0.5)
    assert figure(0.5, at_least_half, 1, scale=100) == "50.0"
    assert figure(0.5004, at_least_half, 1, scale=100) == "50.0"
    # 49.96% rounds to 50.0, which would read as met.
    assert figure(0.4996, at_least_half, 1, scale=100) == "49.96"
    assert figure(0.41, at_least_half, 1, scale=100) == "41.0"
    at_most = Bound(10, at_most=True)
    assert figure(10.04, at_most, 1) == "10.04"
    assert figure(9.96, at_most, 1) == "10.0"
    assert figure(9.94, at_most, 1) == "9.9"


def test_a_figure_keeps_thousands_separators_when_read_back() -> None:
    assert figure(999.5, Bound(1000), 0) == "999.5"
    assert figure(1234.4, Bound(1000), 0) == "1,234"


def test_a_figure_a_few_float_roundings_off_its_bound_is_on_it() -> None:
    # (49 × 0.021) / (49 × 0.02) is 1.0500000000000003 in floating point: on the bound.
    cost = (49 * 0.021) / (49 * 0.02)
    assert cost == math.nextafter(1.05, math.inf)
    assert Bound(1.05, at_most=True).met(cost)
    assert figure(cost, Bound(1.05, at_most=True), 2) == "1.05"
    assert Bound(0.5).met(math.nextafter(0.5, 0))
    assert not Bound(1.05, at_most=True).met(1.0501)
    assert not Bound(0.5).met(0.4999)


# Each target --------------------------------------------------------------------------


def test_guest_share_of_the_ceiling_met_at_exactly_half() -> None:
    rows = by_key(one("ceiling", 10_000), one("guest-call", 5_000))
    assert target(rows, "guest tools/call ≥ 50%") == Target(
        "guest tools/call ≥ 50% of the ceiling", "50.0%", met=True
    )


def test_guest_share_just_under_half_is_not_met_nor_printed_as_half() -> None:
    rows = by_key(one("ceiling", 10_000), one("guest-call", 4_996))
    found = target(rows, "guest tools/call ≥ 50%")
    assert (found.measured, found.met) == ("49.96%", False)


def test_share_gives_its_range_over_rounds_each_against_its_own_round() -> None:
    ceiling = row(
        "ceiling", measured("ceiling", 10_000), measured("ceiling", 8_000, round_number=2)
    )
    guest = row(
        "guest-call", measured("guest-call", 4_500), measured("guest-call", 4_400, round_number=2)
    )
    found = target(by_key(ceiling, guest), "guest tools/call ≥ 50%")
    # Medians: 4,450 / 9,000 = 49.4%; rounds: 45.0% and 55.0%.
    assert found == Target(
        "guest tools/call ≥ 50% of the ceiling", "49.4% (rounds 45.0%–55.0%)", met=False
    )


def test_round_ranges_need_two_rounds_measured_on_both_sides() -> None:
    ceiling = row("ceiling", measured("ceiling", 10_000))
    guest = row(
        "guest-call", measured("guest-call", 5_000), measured("guest-call", 4_000, round_number=2)
    )
    assert round_ratios(guest, ceiling) == ""
    assert round_cpu_ratios(guest, ceiling) == ""


def test_cpu_ranges_compare_cost_per_request_round_by_round() -> None:
    guest = row(
        "guest-call",
        measured("guest-call", 10_000, server_cpu=0.5),
        measured("guest-call", 10_000, round_number=2, server_cpu=0.5),
    )
    modern = row(
        "guest-call-2026",
        measured("guest-call-2026", 10_000, server_cpu=0.5),
        measured("guest-call-2026", 5_000, round_number=2, server_cpu=0.5),
    )
    assert round_cpu_ratios(modern, guest) == " (rounds 1.00–2.00×)"


def test_sdk_factors_each_against_their_own_sdk() -> None:
    rows = by_key(
        one("ceiling", 20_000),
        one("guest-call", 6_000),
        one("mcp-python", 750),
        one("mcp-python-2026", 1_001),
        one("mcp-typescript", 1_250),
    )
    assert target(rows, "guest tools/call ≥ 8× the Python SDK, stateless") == Target(
        "guest tools/call ≥ 8× the Python SDK, stateless JSON", "8.00×", met=True
    )
    # 5.994× rounds to 5.99 at two digits, which reads as unmet: no extra digit needed.
    found = target(rows, "guest tools/call ≥ 6× the Python SDK, 2026-07-28 mode")
    assert (found.measured, found.met) == ("5.99×", False)
    found = target(rows, "guest tools/call ≥ 5× the TS SDK")
    assert (found.measured, found.met) == ("4.80×", False)


def test_modern_call_cost_at_the_bound_is_met() -> None:
    rows = by_key(
        one("guest-call", 10_000, server_cpu=0.4),
        one("guest-call-2026", 10_000, server_cpu=0.42),
    )
    found = target(rows, "guest tools/call at 2026-07-28: server CPU")
    assert found.measured == "1.05× (42 against 40 µs)"
    assert found.met


def test_modern_call_cost_over_the_bound_is_not_met() -> None:
    rows = by_key(
        one("guest-call", 10_000, server_cpu=0.4),
        one("guest-call-2026", 10_000, server_cpu=0.42016),
    )
    found = target(rows, "guest tools/call at 2026-07-28: server CPU")
    # 1.0504 prints as 1.05 at two digits, which would read as met.
    assert (found.measured, found.met) == ("1.0504× (42 against 40 µs)", False)


def test_modern_call_against_the_sdk_in_2026_mode() -> None:
    rows = by_key(one("guest-call-2026", 7_000), one("mcp-python-2026", 1_000))
    found = target(rows, "guest tools/call at 2026-07-28 ≥ 6×")
    assert (found.measured, found.met) == ("7.00×", True)


def test_signed_in_share_of_the_ceiling() -> None:
    rows = by_key(one("ceiling", 10_000), one("bearer-pg", 4_500), one("bearer-sqlite", 3_000))
    found = target(rows, "signed-in tools/call on PostgreSQL ≥ 45%")
    assert (found.measured, found.met) == ("45.0%", True)
    found = target(rows, "signed-in tools/call on SQLite ≥ 30%")
    assert (found.measured, found.met) == ("30.0%", True)
    rows = by_key(one("ceiling", 10_000), one("bearer-pg", 4_400), one("bearer-sqlite", 2_900))
    assert not target(rows, "signed-in tools/call on PostgreSQL").met
    assert not target(rows, "signed-in tools/call on SQLite").met


def test_refresh_with_two_workers_against_one() -> None:
    rows = by_key(one("refresh-pg", 2_000), one("refresh-pg-2w", 2_000))
    found = target(rows, "refresh grants on PostgreSQL: 2 workers")
    assert (found.measured, found.met) == ("1.00×", True)
    rows = by_key(one("refresh-pg", 2_000), one("refresh-pg-2w", 1_999))
    found = target(rows, "refresh grants on PostgreSQL: 2 workers")
    assert (found.measured, found.met) == ("0.9995×", False)


def test_batch_cost_per_call_against_a_third() -> None:
    # 450 batches of 20 a second: 9,000 calls a second against 3,000 single ones, exactly 1/3.
    rows = by_key(one("guest-call", 3_000), one("guest-batch", 450))
    found = target(rows, "a batch of 20")
    assert (found.measured, found.met) == ("0.33 per call", True)
    rows = by_key(one("guest-call", 3_000), one("guest-batch", 449))
    found = target(rows, "a batch of 20")
    # 0.33408 prints as 0.33, under a third: a third digit shows it is over.
    assert (found.measured, found.met) == ("0.334 per call", False)


def test_p99_is_the_median_of_the_rounds_against_ten_ms() -> None:
    guest = row(
        "guest-call",
        measured("guest-call", 5_000, p99_ms=9.0),
        measured("guest-call", 5_000, round_number=2, p99_ms=10.04),
        measured("guest-call", 5_000, round_number=3, p99_ms=30.0),
    )
    found = target(by_key(guest), "p99 ≤ 10 ms")
    assert found == Target(
        "p99 ≤ 10 ms: guest tools/call, Frontdesk, SQLite, 1 worker", "10.04 ms", met=False
    )
    assert target(by_key(one("guest-call", 5_000, p99_ms=10.0)), "p99").met


def test_rss_names_the_largest_frontdesk_worker_and_ignores_the_baselines() -> None:
    rows = by_key(
        one("ceiling", 10_000, rss_mb=400.0),
        one("guest-call", 5_000, rss_mb=60.0),
        one("guest-call-pg", 4_000, rss_mb=100.4),
    )
    found = target(rows, "RSS")
    assert found == Target(
        "RSS ≤ 100 MB per worker after the run",
        "largest: 100.4 MB (Frontdesk, PostgreSQL, 1 worker)",
        met=False,
    )
    rows = by_key(one("ceiling", 10_000, rss_mb=400.0), one("guest-call", 5_000, rss_mb=100.0))
    assert target(rows, "RSS").met


def test_rss_uses_each_row_s_last_run() -> None:
    guest = row(
        "guest-call",
        measured("guest-call", 5_000, rss_mb=90.0),
        measured("guest-call", 5_000, round_number=2, rss_mb=70.0),
    )
    assert target(by_key(guest), "RSS").met


def test_two_workers_against_one() -> None:
    rows = by_key(one("guest-call-pg", 1_000), one("guest-call-pg-2w", 1_600))
    found = target(rows, "2 workers ≥ 1.6× one worker: guest")
    assert (found.measured, found.met) == ("1.60×", True)
    rows = by_key(one("guest-call-pg", 1_000), one("guest-call-pg-2w", 1_599))
    found = target(rows, "2 workers ≥ 1.6× one worker: guest")
    assert (found.measured, found.met) == ("1.599×", False)


def test_refresh_grants_per_worker() -> None:
    rows = by_key(one("refresh-pg", 4_049), one("refresh-pg-2w", 1_999))
    name = "refresh grants on PostgreSQL ≥ 1,000/s per worker (Frontdesk, PostgreSQL"
    one_worker = target(rows, f"{name}, 1 worker)")
    assert (one_worker.measured, one_worker.met) == ("4,049/s per worker", True)
    two_workers = target(rows, f"{name}, 2 workers)")
    # 999.5 a worker would print as 1,000.
    assert (two_workers.measured, two_workers.met) == ("999.5/s per worker", False)


# Missing and zero figures ------------------------------------------------------------


def test_only_targets_whose_scenarios_ran_are_judged() -> None:
    assert targets(by_key(one("ceiling", 10_000))) == []
    names = [t.name for t in targets(by_key(one("guest-call", 5_000)))]
    # No ceiling and no SDKs ran: only what the guest row decides on its own.
    assert names == [
        "p99 ≤ 10 ms: guest tools/call, Frontdesk, SQLite, 1 worker",
        "RSS ≤ 100 MB per worker after the run",
    ]
    rows = by_key(one("ceiling", 10_000), one("guest-call", 5_000), one("mcp-python", 500))
    sdk_targets = [t.name for t in targets(rows) if "SDK" in t.name]
    assert sdk_targets == ["guest tools/call ≥ 8× the Python SDK, stateless JSON"]


def test_a_target_whose_divisor_served_nothing_is_not_met_and_says_so() -> None:
    rows = by_key(one("ceiling", 0), one("guest-call", 5_000), one("mcp-python", 0))
    found = target(rows, "guest tools/call ≥ 50%")
    assert not found.met
    assert found.measured.startswith("no figure")
    assert not target(rows, "guest tools/call ≥ 8×").met


def test_a_row_that_served_nothing_meets_no_ratio() -> None:
    rows = by_key(one("ceiling", 10_000), one("guest-call", 0))
    found = target(rows, "guest tools/call ≥ 50%")
    assert (found.measured, found.met) == ("0.0%", False)


def test_cpu_cost_without_requests_is_no_figure() -> None:
    rows = by_key(one("guest-call", 0), one("guest-call-2026", 10_000))
    assert one("guest-call", 0).cpu_us is None
    found = target(rows, "guest tools/call at 2026-07-28: server CPU")
    assert not found.met
    assert found.measured.startswith("no figure")


def test_results_table_prints_a_dash_for_ratios_it_cannot_make() -> None:
    ceiling = one("ceiling", 0)
    (line,) = results_table([ceiling], ceiling)[2:]
    assert "| - |" in line
    assert "(-)" in line


# Two workers on two cores -------------------------------------------------------------


def test_scaling_bound_from_the_single_worker_s_cost_and_wrk_s() -> None:
    rows = by_key(
        one("guest-call-pg", 10_000, server_cpu=0.4),
        one("guest-call-pg-2w", 16_000, wrk_cpu=0.16),
    )
    (bound,) = scaling_bounds(rows)
    # c = 40 µs, w = 10 µs: 2c / (c + w) = 1.6.
    assert bound.server_us == pytest.approx(40)
    assert bound.wrk_us == pytest.approx(10)
    assert bound.times == pytest.approx(1.6)


def test_no_scaling_bound_without_a_cost() -> None:
    rows = by_key(one("guest-call-pg", 0), one("guest-call-pg-2w", 16_000))
    assert scaling_bounds(rows) == []
    assert scaling_bounds(by_key(one("guest-call-pg", 10_000))) == []


def test_ceiling_scaling() -> None:
    assert ceiling_scaling(by_key(one("ceiling", 10_000), one("ceiling-2w", 13_100))) == (
        pytest.approx(1.31)
    )
    assert ceiling_scaling(by_key(one("ceiling", 10_000))) is None
    assert ceiling_scaling(by_key(one("ceiling", 0), one("ceiling-2w", 13_100))) is None
