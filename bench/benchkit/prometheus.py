"""A Prometheus of the run's own, scraping one Frontdesk with the metrics bearer token, as
the README tells an operator to, with the shipped alert rules loaded and a directory of
console templates to serve."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchkit.processes import BenchError, free_port
from benchkit.servers import Environment, Running

START_TIMEOUT = 30.0
# Scrapes and rule evaluations this often, so that a run of minutes draws fine lines.
INTERVAL = "1s"


@dataclass(frozen=True, slots=True)
class Prometheus:
    base_url: str

    def query(self, expression: str) -> list[Any]:
        with httpx.Client(timeout=10.0) as client:
            answer = client.get(f"{self.base_url}/api/v1/query", params={"query": expression})
        body = answer.json()
        if body.get("status") != "success":
            raise BenchError(f"Prometheus could not evaluate {expression}: {body}")
        result: list[Any] = body["data"]["result"]
        return result

    def wait_for(self, expression: str, what: str, timeout: float = START_TIMEOUT) -> None:
        """Until ``expression`` has a sample: what is waited for is named in the error."""
        deadline = time.monotonic() + timeout
        while not self.query(expression):
            if time.monotonic() > deadline:
                raise BenchError(f"Prometheus: {what} within {timeout:.0f}s")
            time.sleep(0.5)


def start_prometheus(
    env: Environment, target: Running, token: str, rules: Path, consoles: Path
) -> Prometheus:
    binary = shutil.which("prometheus")
    if binary is None:
        raise BenchError("Prometheus is not installed (apt-get install prometheus)")
    workdir = env.run_dir / "prometheus"
    workdir.mkdir()
    config = {
        "global": {"scrape_interval": INTERVAL, "evaluation_interval": INTERVAL},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {
                "job_name": "frontdesk",
                "metrics_path": "/metrics",
                "authorization": {"type": "Bearer", "credentials": token},
                "static_configs": [{"targets": [target.base_url.removeprefix("http://")]}],
            }
        ],
    }
    # JSON is YAML: the configuration needs no YAML writer.
    (workdir / "prometheus.yml").write_text(json.dumps(config, indent=1))
    port = free_port()
    command = [
        binary,
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
        f"--web.console.templates={consoles}",
        f"--web.console.libraries={consoles}",
    ]
    pid = env.processes.start("prometheus", command, env.run_dir / "prometheus.log")
    prometheus = Prometheus(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + START_TIMEOUT
    with httpx.Client(timeout=2.0) as client:
        while True:
            if not env.processes.alive(pid):
                log = (env.run_dir / "prometheus.log").read_text(errors="replace")
                raise BenchError(f"Prometheus exited:\n{log[-2000:]}")
            try:
                if client.get(f"{prometheus.base_url}/-/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"Prometheus did not start within {START_TIMEOUT:.0f}s")
            time.sleep(0.3)
    prometheus.wait_for('up{job="frontdesk"} == 1', "no successful scrape of Frontdesk")
    return prometheus
