"""The Prometheus metrics: every family Frontdesk exposes at /metrics, defined in one place.

Kept by ``prometheus_client``. Under ``frontdesk serve`` each worker is a process of its
own, and a scrape reaches whichever worker the kernel hands the connection to: figures
kept in that worker's memory would read as that worker's share (the issue's "11, 11, 21").
So the server (http_server.py) gives its workers a directory of their own in
``PROMETHEUS_MULTIPROC_DIR``, where ``prometheus_client``'s multiprocess mode keeps every
worker's figures in a memory-mapped file, and /metrics adds all the files up: every
worker answers with the same totals, and a worker that exits or is respawned leaves its
counts in them. Without that variable (an application built in a test, or embedded), each
application keeps its figures in a registry of its own, so that several applications in
one process never share counters.

A family is added as one more attribute of ``Metrics`` (a Counter or a Histogram; a Gauge
under several workers needs a ``multiprocess_mode``), with a method that records it.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

# Where prometheus_client's multiprocess mode keeps the workers' files: it reads this
# variable when it is first imported, so it must be set before a worker starts.
MULTIPROCESS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

# Prometheus's text exposition format, version 0.0.4, as generate_latest writes it. Named
# in full: Prometheus 3 refuses a scrape whose format it cannot tell, and the library's
# CONTENT_TYPE_LATEST names version 1.0.0 in its recent releases.
EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Request durations, in seconds: from a cached health check to a slow backend call.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)

# No ``_created`` series (each label set's creation time): the multiprocess collector
# cannot add them up across workers, and the exposition would differ with the mode.
disable_created_metrics()  # type: ignore[no-untyped-call]  # (the library's own annotations)


class Metrics:
    """The families, and where /metrics reads them from. One per application."""

    def __init__(self) -> None:
        own = CollectorRegistry(auto_describe=False)
        self.http_requests = Counter(
            "frontdesk_http_requests",
            "HTTP requests answered, by route and status.",
            ("method", "route", "status"),
            registry=own,
        )
        self.http_request_duration = Histogram(
            "frontdesk_http_request_duration_seconds",
            "Time to answer an HTTP request, by route.",
            ("route",),
            buckets=BUCKETS,
            registry=own,
        )
        self._shared_dir = os.environ.get(MULTIPROCESS_DIR_VARIABLE) or None
        self._exposed = own if self._shared_dir is None else _every_worker(self._shared_dir)
        # Each label set's children, looked up once: ``labels()`` checks and joins the
        # values and takes a lock, and a request is recorded on every call.
        self._request_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def record(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request."""
        key = (route, method, status)
        children = self._request_children.get(key)
        if children is None:
            children = self._request_children[key] = (
                self.http_requests.labels(method, route, str(status)),
                self.http_request_duration.labels(route),
            )
        requests, duration = children
        requests.inc()
        duration.observe(seconds)

    def exposition(self) -> str:
        """Every figure, of every worker, in Prometheus's text exposition format."""
        return generate_latest(self._exposed).decode()

    def stop(self) -> None:
        """This worker is stopping: its files' live gauges (none yet) stop counting.

        Its counters and histograms stay in the totals, as the counts they are."""
        if self._shared_dir is not None:
            mark_process_dead(os.getpid(), self._shared_dir)  # type: ignore[no-untyped-call]


def _every_worker(shared_dir: str) -> CollectorRegistry:
    """A registry that reads every worker's files when collected."""
    registry = CollectorRegistry(auto_describe=False)
    MultiProcessCollector(registry, shared_dir)  # type: ignore[no-untyped-call]
    return registry
