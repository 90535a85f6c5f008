"""A worker's counts in memory (usage.counters) and the percentiles read from buckets
(usage.report): the arithmetic, without a database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from frontdesk.store.tables import LATENCY_BOUNDS_MS
from frontdesk.usage import counters as usage
from frontdesk.usage.counters import UsageCounters
from frontdesk.usage.report import InvalidRange, chosen_range, hour_range, percentile


def _buckets(**counts: int) -> list[int]:
    """Counts per bucket by upper bound: ``le_5=3`` and ``over=1``."""
    buckets = [0] * (len(LATENCY_BOUNDS_MS) + 1)
    for name, count in counts.items():
        index = (
            len(LATENCY_BOUNDS_MS)
            if name == "over"
            else LATENCY_BOUNDS_MS.index(int(name.removeprefix("le_")))
        )
        buckets[index] = count
    return buckets


def test_a_latency_is_counted_in_the_first_bucket_whose_bound_it_does_not_pass() -> None:
    counters = UsageCounters()
    for seconds in (0.001, 0.005, 0.0051, 0.2, 61.0):
        counters.record("acme", "echo", usage.OK, None, seconds)
    [(key, tally)] = counters.take().tallies.items()
    assert key[:2] == ("acme", "echo")
    assert key[3:] == (usage.OK, False)
    assert key[2] % 3600 == 0
    calls, milliseconds, *buckets = tally
    assert calls == 5
    assert milliseconds == pytest.approx(1 + 5 + 5.1 + 200 + 61_000)
    assert buckets == _buckets(le_5=2, le_10=1, le_250=1, over=1)


def test_a_call_refused_before_its_provider_is_counted_without_a_latency() -> None:
    counters = UsageCounters()
    counters.record("acme", "whoami", usage.UNAUTHORIZED, None)
    [tally] = counters.take().tallies.values()
    assert tally[0] == 1
    assert sum(tally[1:]) == 0


def test_signed_in_calls_are_counted_apart_and_their_customers_once_each() -> None:
    counters = UsageCounters()
    for subject in ("dev:peter", "dev:samir", "dev:peter"):
        counters.record("initech", "whoami", usage.OK, subject, 0.01)
    counters.record("initech", "whoami", usage.OK, None, 0.01)
    counts = counters.take()
    by_caller = {key[4]: tally[0] for key, tally in counts.tallies.items()}
    assert by_caller == {True: 3, False: 1}
    [(hour_key, subjects)] = counts.customers.items()
    assert hour_key[:2] == ("initech", "whoami")
    assert subjects == {"dev:peter", "dev:samir"}
    assert not counters.take()


def test_counts_given_back_add_to_those_counted_since() -> None:
    counters = UsageCounters()
    counters.record("acme", "echo", usage.OK, "dev:a", 0.001)
    taken = counters.take()
    counters.record("acme", "echo", usage.OK, "dev:b", 0.001)
    assert counters.give_back(taken) == (0, 0)
    counts = counters.take()
    [tally] = counts.tallies.values()
    assert tally[0] == 2
    assert list(counts.customers.values()) == [{"dev:a", "dev:b"}]


def test_counts_kept_past_their_bound_lose_their_oldest_hours_first() -> None:
    counters = UsageCounters(max_keys=2, max_customers=2)
    hours = [3600 * hour for hour in (10, 11, 12)]
    old = usage.Counts(
        tallies={("acme", "echo", hour, usage.OK, True): [1.0] + [0.0] * 15 for hour in hours},
        customers={("acme", "echo", hour): {f"dev:{hour}"} for hour in hours},
    )
    assert counters.give_back(old) == (1, 1)
    kept = counters.take()
    assert sorted(key[2] for key in kept.tallies) == hours[1:]
    assert sorted(key[2] for key in kept.customers) == hours[1:]


def test_percentiles_are_read_from_buckets_as_prometheus_reads_a_histogram() -> None:
    # 10 calls: 5 at most 5 ms, 4 in (5, 10], 1 in (100, 250].
    buckets = _buckets(le_5=5, le_10=4, le_250=1)
    # Rank 5 is the last of the first bucket: its upper bound.
    assert percentile(buckets, 0.5) == 5.0
    # Rank 9.5 falls halfway into the (100, 250] bucket.
    assert percentile(buckets, 0.95) == 175.0
    # Rank 7 is 2 of 4 into (5, 10].
    assert percentile(buckets, 0.7) == 7.5
    assert percentile(_buckets(), 0.5) is None
    # Past the last bound there is no upper one: the last bound is the answer.
    assert percentile(_buckets(over=3), 0.5) == float(LATENCY_BOUNDS_MS[-1])


def test_a_range_is_widened_to_whole_hours_and_must_not_be_empty() -> None:
    since = datetime(2026, 11, 28, 13, 20, tzinfo=UTC)
    until = datetime(2026, 11, 28, 15, 0, 1, tzinfo=UTC)
    assert hour_range(since, until) == (
        datetime(2026, 11, 28, 13, tzinfo=UTC),
        datetime(2026, 11, 28, 16, tzinfo=UTC),
    )
    assert hour_range(since, since) == (
        datetime(2026, 11, 28, 13, tzinfo=UTC),
        datetime(2026, 11, 28, 14, tzinfo=UTC),
    )
    with pytest.raises(InvalidRange):
        hour_range(until, since)
    with pytest.raises(InvalidRange):
        hour_range(since.replace(tzinfo=None), until)


def test_a_range_at_the_ends_of_time_is_refused_not_failed() -> None:
    now = datetime(2026, 11, 28, 13, 20, tzinfo=UTC)
    # Without since, the day before until.
    assert chosen_range(None, None, now) == (
        datetime(2026, 11, 27, 13, tzinfo=UTC),
        datetime(2026, 11, 28, 14, tzinfo=UTC),
    )
    latest = datetime.max.replace(tzinfo=UTC)
    earliest = datetime.min.replace(tzinfo=UTC)
    with pytest.raises(InvalidRange):
        chosen_range(None, earliest, now)
    with pytest.raises(InvalidRange):
        chosen_range(now, latest, now)
    with pytest.raises(InvalidRange, match="at most"):
        chosen_range(earliest, now, now)
