"""The families every request records (the edge's, and a tool call's backend figures), kept
in the worker's memory and handed to the other workers in batches.

``prometheus_client``'s multiprocess mode writes each update through to the worker's
memory-mapped file, after asking the system for the process id: a guest ``tools/call``
made eight such updates. Here an update is an addition to a list in memory, and each
worker writes all its figures at once, every ``FLUSH_SECONDS`` and when it stops, to a
file of its own in the workers' shared directory (``requests_<pid>.json``, replaced
whole, so a reader never sees half of one). /metrics adds up every worker's file, its own
live figures in place of its file: a scrape reads its own worker exactly and the others
as of their last batch, at most ``FLUSH_SECONDS`` old. A worker killed outright (SIGKILL,
the OOM killer) loses what it counted since its last batch; its file stays in the totals,
as prometheus_client's do (docs/design.md, "Hot path").

What /metrics shows is unchanged: the same names, help, labels and buckets, counters with
``_total`` and histograms with cumulative ``_bucket``, ``_count`` and ``_sum``.
"""

from __future__ import annotations

import contextlib
import os
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import orjson
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric

# How often a worker hands its figures to the others: a scrape every 15 s or more sees at
# most this much of another worker's last second missing.
FLUSH_SECONDS = 1.0
_FILE_PREFIX = "requests_"

Labels = tuple[str, ...]


class Family:
    """One counter (``bounds`` None) or histogram: its cells per label set. A counter's
    cells are ``[count]``; a histogram's one count per bucket (not cumulative; the last
    +Inf) and the sum of what was observed."""

    __slots__ = ("_bounds", "_width", "cells", "help", "labelnames", "name")

    def __init__(
        self, name: str, help: str, labelnames: Sequence[str], bounds: Sequence[float] | None
    ) -> None:
        self.name = name
        self.help = help
        self.labelnames = tuple(labelnames)
        self._bounds = None if bounds is None else tuple(bounds)
        self._width = 1 if bounds is None else len(bounds) + 2
        self.cells: dict[Labels, list[float]] = {}

    def inc(self, labels: Labels) -> None:
        cells = self.cells.get(labels)
        if cells is None:
            cells = self.cells[labels] = [0.0] * self._width
        cells[0] += 1

    def observe(self, labels: Labels, value: float) -> None:
        cells = self.cells.get(labels)
        if cells is None:
            cells = self.cells[labels] = [0.0] * self._width
        # The first bucket whose upper bound holds the value (Prometheus's "le"), as
        # prometheus_client's Histogram finds it; past the last bound, +Inf.
        cells[bisect_left(self._bounds or (), value)] += 1
        cells[-1] += value

    def add(self, labels: Labels, cells: Sequence[float]) -> None:
        """Add another worker's ``cells`` for ``labels``."""
        if len(cells) != self._width:
            return  # a file from a release with other buckets: not comparable
        mine = self.cells.get(labels)
        if mine is None:
            self.cells[labels] = list(cells)
        else:
            for index, value in enumerate(cells):
                mine[index] += value

    def exposed(self) -> Metric | None:
        """The family as prometheus_client exposes it, or None when nothing was recorded."""
        if not self.cells:
            return None
        if self._bounds is None:
            counter = CounterMetricFamily(self.name, self.help, labels=self.labelnames)
            for labels, (count,) in sorted(self.cells.items()):
                counter.add_metric(labels, count)
            return counter
        histogram = HistogramMetricFamily(self.name, self.help, labels=self.labelnames)
        bounds = [*(repr(float(bound)) for bound in self._bounds), "+Inf"]
        for labels, cells in sorted(self.cells.items()):
            cumulative = 0.0
            buckets = []
            for bound, count in zip(bounds, cells, strict=False):
                cumulative += count
                buckets.append((bound, cumulative))
            histogram.add_metric(labels, buckets, cells[-1])
        return histogram


class RequestFigures:
    """This worker's ``families``, shared through ``shared_dir`` when there is one."""

    def __init__(self, families: Iterable[Family], shared_dir: str | None) -> None:
        self.families = {family.name: family for family in families}
        self._shared_dir = None if shared_dir is None else Path(shared_dir)
        self._written: bytes | None = None
        if self._shared_dir is not None:
            # A worker whose process id an earlier one had (ids are reused) carries on
            # from that one's file rather than overwriting its counts.
            self._add_file(self._own_file(), self.families)

    def flush(self) -> None:
        """Hand this worker's figures to the others (a file write when they changed)."""
        if self._shared_dir is None:
            return
        figures = orjson.dumps(
            {
                name: [[list(labels), cells] for labels, cells in family.cells.items()]
                for name, family in self.families.items()
            }
        )
        if figures == self._written:
            return
        own = self._own_file()
        partial = own.with_suffix(".partial")
        with contextlib.suppress(OSError):  # a full disk costs figures, not requests
            partial.write_bytes(figures)
            partial.replace(own)
            self._written = figures

    def collect(self) -> Iterator[Metric]:
        """Every worker's figures added up: this one's live, the others' from their files."""
        totals = {
            name: Family(family.name, family.help, family.labelnames, family._bounds)
            for name, family in self.families.items()
        }
        for name, family in self.families.items():
            for labels, cells in family.cells.items():
                totals[name].add(labels, cells)
        if self._shared_dir is not None:
            own = self._own_file()
            for path in self._shared_dir.glob(f"{_FILE_PREFIX}*.json"):
                if path != own:
                    self._add_file(path, totals)
        for family in totals.values():
            if (exposed := family.exposed()) is not None:
                yield exposed

    def _own_file(self) -> Path:
        assert self._shared_dir is not None
        return self._shared_dir / f"{_FILE_PREFIX}{os.getpid()}.json"

    @staticmethod
    def _add_file(path: Path, into: dict[str, Family]) -> None:
        try:
            figures = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return  # no such worker yet, or a file only another release would write
        for name, rows in figures.items():
            family = into.get(name)
            if family is None:
                continue
            for labels, cells in rows:
                family.add(tuple(labels), cells)
