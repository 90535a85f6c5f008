"""The pinned MCP conformance suite (npm ``@modelcontextprotocol/conformance``, see
tests/conformance/package.json): where it is installed, what it requires, and the results
it saves."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT
from tests.support.npm import ensure_installed, node_major

CONFORMANCE = ROOT / "tests" / "conformance"
COMPANIES = CONFORMANCE / "companies.yaml"
SUITE_PACKAGE = CONFORMANCE / "node_modules" / "@modelcontextprotocol" / "conformance"
# The suite needs Node 22, which the node package in package.json brings along.
NODE = CONFORMANCE / "node_modules" / ".bin" / "node"
SUITE = SUITE_PACKAGE / "dist" / "index.js"
MIN_NODE_MAJOR = 22
TENANT_KEY = "conformance"

# The suite saves each scenario's checks in <output>/<mode>-<scenario>-<ISO time>/checks.json,
# <mode> being "server" or "authorization-server".
_TIMESTAMP = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z"
SERVER_RESULT_DIR = re.compile(rf"server-(?P<scenario>.+)-{_TIMESTAMP}")
AUTHORIZATION_RESULT_DIR = re.compile(rf"authorization-server-(?P<scenario>.+)-{_TIMESTAMP}")
# A warning fails a scenario here, though the suite's exit code counts failures only.
FAILING = frozenset({"FAILURE", "WARNING"})


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's checks as the suite saved them."""

    scenario: str
    checks: list[dict[str, Any]]

    @property
    def failed(self) -> bool:
        return any(check.get("status") in FAILING for check in self.checks)

    def problems(self) -> list[str]:
        return [
            f"{check.get('id')}: {check.get('status')}: {check.get('errorMessage', '')}"
            for check in self.checks
            if check.get("status") in FAILING
        ]


def read_results(
    output_dir: Path, result_dir: re.Pattern[str] = SERVER_RESULT_DIR
) -> dict[str, ScenarioResult]:
    """Every scenario's checks.json under the suite's output directory, by scenario name."""
    results: dict[str, ScenarioResult] = {}
    for checks_file in sorted(output_dir.glob("*/checks.json")):
        match = result_dir.fullmatch(checks_file.parent.name)
        assert match is not None, f"unexpected result folder {checks_file.parent.name}"
        scenario = match["scenario"]
        assert scenario not in results, f"{scenario} has two result folders"
        results[scenario] = ScenarioResult(scenario, json.loads(checks_file.read_text()))
    return results


def requirements(revision: str) -> dict[str, Any]:
    """The suite's frozen requirement set for ``revision`` (its ``--requirements`` option)."""
    document: dict[str, Any] = yaml.safe_load(
        (SUITE_PACKAGE / "requirements" / f"{revision}.yaml").read_text()
    )
    return document


def installed_node() -> Path:
    """Node 22 from tests/conformance, with the pinned suite, installed on first use."""
    ensure_installed(CONFORMANCE)
    major = node_major(str(NODE))
    assert major is not None, f"{NODE} did not report its version"
    assert major >= MIN_NODE_MAJOR, f"the conformance suite needs Node.js 22+, {NODE} is {major}"
    return NODE
