"""/metrics under `frontdesk serve --workers 2`, as a real process: whichever worker answers
a scrape, it reads every worker's figures (metrics.py), so successive scrapes agree, and a
worker that dies leaves its counts in the totals. Each request and each scrape goes on a
connection of its own, which the kernel hands to either worker (``SO_REUSEPORT``)."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.live.conftest import RunningProcess, start_service
from tests.live.test_workers import wait_until_every_worker_listens
from tests.support.waiting import wait_until

pytestmark = pytest.mark.live

REQUESTS = 21
SCRAPES = 10
# The index: no one else asks for it (the start-up probe reads /healthz).
ROUTE = "/"
RESPAWN_DEADLINE = 30.0
# Each worker hands its figures to the others every second.
BATCH_DEADLINE = 10.0


def test_every_scrape_reads_every_workers_requests(tmp_path: Path) -> None:
    """The issue's case: 21 requests, then scrapes that read 11, 11, 21, 11, 21 when each
    worker counted only its own."""
    metrics_base = tmp_path / "metrics"
    metrics_base.mkdir()
    running = start_two_workers(tmp_path, {"FRONTDESK_METRICS_DIR": str(metrics_base)})
    try:
        for _ in range(REQUESTS):
            assert fresh_connection_get(running, ROUTE).status_code == 200
        wait_for_the_batches(running)
        assert scraped_totals(running) == [(REQUESTS, REQUESTS)] * SCRAPES

        # The workers' files are in a directory of this start's own, which only the
        # service's user may enter.
        [shared] = metrics_base.iterdir()
        assert stat.S_IMODE(shared.stat().st_mode) == 0o700
        assert any(shared.iterdir())
    finally:
        assert running.stop(), running.service.output()
    # And removed when the service stops.
    assert list(metrics_base.iterdir()) == []


def test_a_dead_workers_requests_stay_counted(tmp_path: Path) -> None:
    """A worker killed outright is respawned by the server with an empty memory; its
    requests stay in the totals every worker reports."""
    running = start_two_workers(tmp_path)
    try:
        port = int(running.service.base_url.rsplit(":", 1)[1])
        for _ in range(REQUESTS):
            assert fresh_connection_get(running, ROUTE).status_code == 200
        # Counted in the files: what a worker counted since its last batch dies with it.
        wait_for_the_batches(running)
        workers = wait_until_every_worker_listens(running.process.pid, port, count=2)

        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + RESPAWN_DEADLINE
        while workers[0] in wait_until_every_worker_listens(running.process.pid, port, count=2):
            assert time.monotonic() < deadline, running.service.output()
            time.sleep(0.1)

        assert scraped_totals(running) == [(REQUESTS, REQUESTS)] * SCRAPES
    finally:
        assert running.stop(), running.service.output()


def start_two_workers(tmp_path: Path, extra_env: dict[str, str] | None = None) -> RunningProcess:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'frontdesk.db'}"
    running = start_service("sqlite", database_url, tmp_path, workers=2, extra_env=extra_env)
    port = int(running.service.base_url.rsplit(":", 1)[1])
    # /healthz answering means only that one worker serves.
    wait_until_every_worker_listens(running.process.pid, port, count=2)
    return running


def wait_for_the_batches(running: RunningProcess) -> None:
    """Until every worker has handed its requests to the others: each keeps the figures of
    its requests in memory and writes them out once a second (request_figures.py)."""
    wait_until(
        lambda: all(total == (REQUESTS, REQUESTS) for total in scraped_totals(running)),
        BATCH_DEADLINE,
        "every worker's requests in every scrape",
    )


def fresh_connection_get(running: RunningProcess, path: str) -> httpx.Response:
    """A GET on a connection of its own, so that either worker may take it."""
    with httpx.Client(base_url=running.service.base_url, timeout=10.0) as client:
        return client.get(path)


def scraped_totals(running: RunningProcess) -> list[tuple[float, float]]:
    """Per scrape: the requests counted for ``ROUTE``, and its duration histogram's count."""
    totals = []
    for _ in range(SCRAPES):
        response = fresh_connection_get(running, "/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        counted = duration_count = 0.0
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                if sample.labels.get("route") != ROUTE:
                    continue
                if sample.name == "frontdesk_http_requests_total":
                    assert sample.labels == {"method": "GET", "route": ROUTE, "status": "200"}
                    counted += sample.value
                elif sample.name == "frontdesk_http_request_duration_seconds_count":
                    duration_count += sample.value
        totals.append((counted, duration_count))
    return totals
