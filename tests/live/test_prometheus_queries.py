"""A real Prometheus (Debian's, ``scripts/install-test-servers``) scrapes a live
``frontdesk serve`` with the metrics token, loads deploy/prometheus/frontdesk-alerts.yml and
evaluates every query of deploy/grafana/frontdesk-dashboard.json: each must be valid
PromQL, the alert rules must evaluate without error, and every panel whose traffic the test
drove must chart something.

test_dashboard_series checks names and labels against the exposition; this checks what
only Prometheus can: that the expressions parse, that their functions and matchers apply
to the series as scraped (a counter's ``_total``, a histogram's ``le``), and that the
scrape itself works with the bearer token as the README tells an operator to set it up.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import unavailable
from tests.live.conftest import LiveService, free_port, stop_process
from tests.live.test_dashboard_series import (
    ALERTS,
    DASHBOARD,
    METRICS_TOKEN,
    drive_every_kind_of_traffic,
    metrics_service,
)

pytestmark = pytest.mark.live

START_DEADLINE = 20.0
# Scrapes and rule evaluations every second, so rates have two samples within seconds.
INTERVAL = "1s"
# What Grafana puts in for its variables: every company (the variable's allValue), and
# windows long enough for the test's few seconds of samples.
GRAFANA_VARIABLES = {"$company": ".*", "$__rate_interval": "1m", "$__range": "5m"}
# Panels whose traffic the test does not drive: no request fails with a 5xx, and the
# database never stops answering.
NOT_DRIVEN = {"Error ratio (5xx) by company", "Outage answers (503) by cause"}


def prometheus_binary() -> str:
    """Skip without Prometheus, or fail when CI said it must be there."""
    found = shutil.which("prometheus")
    if found is None:
        unavailable("Prometheus is not installed (run ./scripts/install-test-servers)")
    return found


def panel_queries() -> list[tuple[str, str]]:
    """(panel title, expression) for every query the dashboard charts, with Grafana's
    variables filled in as Grafana would."""
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    queries = []
    for panel in document["panels"]:
        for target in panel.get("targets", []):
            expression = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expression = expression.replace(variable, value)
            assert "$" not in expression, f"a variable the test does not know: {expression}"
            queries.append((panel["title"], expression))
    return queries


def scrape_config(service: LiveService, rules: Path) -> dict[str, Any]:
    """As the README tells an operator: /metrics with the bearer token."""
    return {
        "global": {"scrape_interval": INTERVAL, "evaluation_interval": INTERVAL},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {
                "job_name": "frontdesk",
                "metrics_path": "/metrics",
                "authorization": {"type": "Bearer", "credentials": METRICS_TOKEN},
                "static_configs": [{"targets": [service.base_url.removeprefix("http://")]}],
            }
        ],
    }


@contextmanager
def running_prometheus(config: dict[str, Any], workdir: Path) -> Iterator[httpx.Client]:
    binary = prometheus_binary()
    config_path = workdir / "prometheus.yml"
    config_path.write_text(yaml.safe_dump(config))
    port = free_port()
    log_path = workdir / "prometheus.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "HOME": str(workdir)},
        )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10.0) as api:
            until(
                lambda: _ready(api),
                f"Prometheus did not start:\n{log_path.read_text(errors='replace')}",
            )
            yield api
    finally:
        stop_process(process)


def _ready(api: httpx.Client) -> bool:
    try:
        return api.get("/-/ready").status_code == 200
    except httpx.TransportError:
        return False


def until(check: Any, failure: str, deadline: float = START_DEADLINE) -> None:
    ends = time.monotonic() + deadline
    while not check():
        if time.monotonic() > ends:
            pytest.fail(failure)
        time.sleep(0.2)


def query(api: httpx.Client, expression: str) -> list[Any]:
    answer = api.get("/api/v1/query", params={"query": expression}).json()
    assert answer["status"] == "success", f"{expression}: {answer}"
    result: list[Any] = answer["data"]["result"]
    return result


def scraped_twice_since(api: httpx.Client, since: float) -> bool:
    """The target was scraped, up, at least twice after ``since`` (a rate needs two)."""
    samples = query(api, 'up{job="frontdesk"}[1m]')
    return bool(samples) and sum(float(t) > since for t, _ in samples[0]["values"]) >= 2


def test_prometheus_scrapes_and_evaluates_every_query(tmp_path: Path) -> None:
    for part in ("service", "prometheus"):
        (tmp_path / part).mkdir()
    with metrics_service("sqlite", tmp_path / "service") as service:
        config = scrape_config(service, ALERTS)
        with running_prometheus(config, tmp_path / "prometheus") as api:
            asyncio.run(_drive(service))
            driven = time.time()
            until(
                lambda: scraped_twice_since(api, driven),
                f"no two scrapes after the traffic: {api.get('/api/v1/targets').text}",
            )
            target = api.get("/api/v1/targets").json()["data"]["activeTargets"][0]
            assert target["health"] == "up", target

            charted = {title: query(api, expression) for title, expression in panel_queries()}
            empty = sorted(title for title, series in charted.items() if not series)
            assert set(empty) <= NOT_DRIVEN, f"panels with nothing to chart: {empty}"

            companies = api.get(
                "/api/v1/label/company/values",
                params={"match[]": "frontdesk_company_request_duration_seconds_count"},
            ).json()["data"]
            assert "acme" in companies

            until(lambda: _rules_evaluated(api), "the alert rules were never evaluated")
            for group in api.get("/api/v1/rules").json()["data"]["groups"]:
                for rule in group["rules"]:
                    assert rule["health"] == "ok", rule


def _rules_evaluated(api: httpx.Client) -> bool:
    groups = api.get("/api/v1/rules").json()["data"]["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    return bool(rules) and all(rule["health"] != "unknown" for rule in rules)


async def _drive(service: LiveService) -> None:
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30.0) as http:
        await drive_every_kind_of_traffic(http)
