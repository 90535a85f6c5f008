"""The MCP conformance suite (npm ``@modelcontextprotocol/conformance``, pinned in
tests/conformance/package.json) against Frontdesk running as a real process, serving the
conformance company of tests/conformance/companies.yaml.

Every server scenario runs, the pending ones too (``--suite all``): each one a JSON-only
endpoint can pass must pass, and the rest are listed, with their reasons, in
tests/conformance/expected-failures.yaml.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.live.conftest import LiveService, running_service
from tests.support.npm import ensure_installed, node_major

pytestmark = [pytest.mark.live, pytest.mark.interop]

CONFORMANCE = ROOT / "tests" / "conformance"
COMPANIES = CONFORMANCE / "companies.yaml"
EXPECTED_FAILURES = CONFORMANCE / "expected-failures.yaml"
# The suite needs Node 22, which the node package in package.json brings along.
NODE = CONFORMANCE / "node_modules" / ".bin" / "node"
SUITE = CONFORMANCE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
MIN_NODE_MAJOR = 22
SUITE_TIMEOUT = 300
OUTPUT_TAIL = 6_000
TENANT_KEY = "conformance"

# The suite saves each scenario's checks in <output>/server-<scenario>-<ISO time>/checks.json.
_RESULT_DIR = re.compile(r"server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z")
_SUMMARY = "=== SUMMARY ==="
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# The suite counts a scenario as failed when any check is a failure or a warning.
_FAILING = frozenset({"FAILURE", "WARNING"})


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's checks as the suite saved them."""

    scenario: str
    checks: list[dict[str, Any]]

    @property
    def failed(self) -> bool:
        return any(check.get("status") in _FAILING for check in self.checks)

    def problems(self) -> list[str]:
        return [
            f"{check.get('id')}: {check.get('status')}: {check.get('errorMessage', '')}"
            for check in self.checks
            if check.get("status") in _FAILING
        ]


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: its exit code, what it printed and every scenario's result."""

    returncode: int
    printed: str
    results: dict[str, ScenarioResult]
    service: LiveService

    def report(self) -> str:
        """The suite's own summary (or the tail of its output) and the service's log tail."""
        printed = _ANSI_ESCAPE.sub("", self.printed)
        summary_at = printed.rfind(_SUMMARY)
        suite = printed[summary_at:] if summary_at >= 0 else printed[-OUTPUT_TAIL:]
        return (
            f"conformance suite:\n{suite}\nfrontdesk serve output (tail):\n{self.service.output()}"
        )


def read_results(output_dir: Path) -> dict[str, ScenarioResult]:
    """Every scenario's checks.json under the suite's output directory, by scenario name."""
    results: dict[str, ScenarioResult] = {}
    for checks_file in sorted(output_dir.glob("*/checks.json")):
        match = _RESULT_DIR.fullmatch(checks_file.parent.name)
        assert match is not None, f"unexpected result folder {checks_file.parent.name}"
        scenario = match["scenario"]
        assert scenario not in results, f"{scenario} has two result folders"
        results[scenario] = ScenarioResult(scenario, json.loads(checks_file.read_text()))
    return results


def expected_failures() -> list[str]:
    document = yaml.safe_load(EXPECTED_FAILURES.read_text())
    return [str(name) for name in document["server"]]


@pytest.fixture(scope="module")
def conformance_node() -> Path:
    """Node 22 from tests/conformance, with the pinned suite, installed on first use."""
    ensure_installed(CONFORMANCE)
    major = node_major(str(NODE))
    assert major is not None, f"{NODE} did not report its version"
    assert major >= MIN_NODE_MAJOR, f"the conformance suite needs Node.js 22+, {NODE} is {major}"
    return NODE


@pytest.fixture(scope="module")
def conformance_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Frontdesk on SQLite, serving the test companies plus the conformance company."""
    workdir = tmp_path_factory.mktemp("conformance")
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    with running_service(
        "sqlite", database_url, workdir, extra_companies_files=[COMPANIES]
    ) as service:
        yield service


@pytest.fixture(scope="module")
def suite_run(
    conformance_node: Path,
    conformance_service: LiveService,
    tmp_path_factory: pytest.TempPathFactory,
) -> SuiteRun:
    """The whole server suite run once against the conformance company."""
    output_dir = tmp_path_factory.mktemp("conformance-results")
    command = [
        str(conformance_node),
        str(SUITE),
        "server",
        "--url",
        conformance_service.mcp_url(TENANT_KEY),
        "--suite",
        "all",
        "--output-dir",
        str(output_dir),
        "--expected-failures",
        str(EXPECTED_FAILURES),
    ]
    result = subprocess.run(
        command,
        cwd=CONFORMANCE,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        check=False,
    )
    return SuiteRun(
        returncode=result.returncode,
        printed=result.stdout + result.stderr,
        results=read_results(output_dir),
        service=conformance_service,
    )


def test_every_scenario_passes_except_the_expected_failures(suite_run: SuiteRun) -> None:
    """No scenario fails unless listed in expected-failures.yaml, and none listed passes."""
    expected = expected_failures()
    assert suite_run.results, f"the suite saved no results\n{suite_run.report()}"
    unexpected = [
        result
        for result in suite_run.results.values()
        if result.failed and result.scenario not in expected
    ]
    stale = [
        name
        for name in expected
        if name in suite_run.results and not suite_run.results[name].failed
    ]
    not_run = [name for name in expected if name not in suite_run.results]
    lines = [f"unexpected failure: {result.scenario}" for result in unexpected]
    lines += [f"  {problem}" for result in unexpected for problem in result.problems()]
    lines += [f"passes, so remove it from expected-failures.yaml: {name}" for name in stale]
    lines += [f"listed in expected-failures.yaml but not run: {name}" for name in not_run]
    assert not lines, "\n".join(lines) + f"\n\n{suite_run.report()}"
    assert suite_run.returncode == 0, (
        f"the suite exited with {suite_run.returncode}\n{suite_run.report()}"
    )


def test_expected_failures_fail_only_for_want_of_a_stream(suite_run: SuiteRun) -> None:
    """Each expected failure is a missing server-to-client message, never a broken reply."""
    reasons = {
        "No log notifications received",
        "No progress notifications received",
        "Server did not request sampling from client",
        "Server did not request elicitation from client",
        "Failed: MCP error -32601: Method not found: resources/subscribe",
    }
    for name in expected_failures():
        for check in suite_run.results[name].checks:
            if check.get("status") in _FAILING:
                assert check.get("errorMessage") in reasons, (name, check)


def test_dns_rebinding_protection_refuses_a_foreign_host(suite_run: SuiteRun) -> None:
    """A foreign Host is refused with a 4xx while the service's own host is served."""
    checks = {check["id"]: check for check in suite_run.results["dns-rebinding-protection"].checks}
    rejected = checks["localhost-host-rebinding-rejected"]
    accepted = checks["localhost-host-valid-accepted"]
    assert rejected["status"] == "SUCCESS", rejected
    assert rejected["details"]["statusCode"] == 421
    assert accepted["status"] == "SUCCESS", accepted
    assert accepted["details"]["statusCode"] == 200
