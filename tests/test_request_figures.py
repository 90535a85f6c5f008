"""The per-request families kept in memory (observability/request_figures.py): exposed as
prometheus_client exposes the same observations, and shared between workers by file."""

from __future__ import annotations

import os
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from frontdesk.observability.metrics import BUCKETS
from frontdesk.observability.request_figures import Family, RequestFigures

# On a bound, between bounds, past the last one, and zero.
OBSERVATIONS = (0.001, 0.0007, 0.003, 0.25, 0.2500001, 11.0, 0.0, 2.5)


def exposition(*collectors: object) -> str:
    registry = CollectorRegistry(auto_describe=False)
    for collector in collectors:
        registry.register(collector)  # type: ignore[arg-type]
    return generate_latest(registry).decode()


def test_the_families_read_as_prometheus_clients_own() -> None:
    reference = CollectorRegistry(auto_describe=False)
    counter = Counter("frontdesk_x", "X.", ("route", "status"), registry=reference)
    histogram = Histogram(
        "frontdesk_x_seconds", "X time.", ("route",), buckets=BUCKETS, registry=reference
    )
    ours_counter = Family("frontdesk_x", "X.", ("route", "status"), None)
    ours_histogram = Family("frontdesk_x_seconds", "X time.", ("route",), BUCKETS)
    for index, seconds in enumerate(OBSERVATIONS):
        route = "mcp" if index % 3 else "/"
        counter.labels(route, "200").inc()
        histogram.labels(route).observe(seconds)
        ours_counter.inc((route, "200"))
        ours_histogram.observe((route,), seconds)
    figures = RequestFigures((ours_counter, ours_histogram), None)

    expected = generate_latest(reference).decode()
    assert exposition(figures) == "".join(
        line + "\n" for line in expected.splitlines() if "_created" not in line
    )


def test_a_worker_reads_the_others_batches_and_its_own_live_figures(tmp_path: Path) -> None:
    def families() -> tuple[Family, Family]:
        return (
            Family("frontdesk_y", "Y.", ("route",), None),
            Family("frontdesk_y_seconds", "Y time.", ("route",), BUCKETS),
        )

    earlier_count, earlier_time = families()
    earlier = RequestFigures((earlier_count, earlier_time), str(tmp_path))
    for _ in range(3):
        earlier_count.inc(("mcp",))
        earlier_time.observe(("mcp",), 0.002)
    earlier.flush()
    # That worker's file, as another process's: this process is the next worker.
    (tmp_path / f"requests_{os.getpid()}.json").rename(tmp_path / "requests_1.json")
    count, time = families()
    figures = RequestFigures((count, time), str(tmp_path))
    count.inc(("mcp",))
    time.observe(("mcp",), 0.02)

    read = exposition(figures)
    assert 'frontdesk_y_total{route="mcp"} 4.0' in read
    assert 'frontdesk_y_seconds_bucket{le="0.0025",route="mcp"} 3.0' in read
    assert 'frontdesk_y_seconds_bucket{le="+Inf",route="mcp"} 4.0' in read
    assert 'frontdesk_y_seconds_count{route="mcp"} 4.0' in read
    # Nothing written until the batch: an update is an addition in memory.
    assert not (tmp_path / f"requests_{os.getpid()}.json").exists()
    figures.flush()
    assert (tmp_path / f"requests_{os.getpid()}.json").exists()


def test_a_worker_with_a_reused_process_id_carries_on_from_its_file(tmp_path: Path) -> None:
    first = Family("frontdesk_z", "Z.", ("route",), None)
    earlier = RequestFigures((first,), str(tmp_path))
    first.inc(("mcp",))
    earlier.flush()

    again = Family("frontdesk_z", "Z.", ("route",), None)
    later = RequestFigures((again,), str(tmp_path))
    again.inc(("mcp",))
    later.flush()
    assert 'frontdesk_z_total{route="mcp"} 2.0' in exposition(later)
