"""The MCP conformance suite (npm ``@modelcontextprotocol/conformance``, pinned in
tests/conformance/package.json) against Frontdesk running as a real process.

Server mode, against the conformance company of tests/conformance/companies.yaml: every
scenario the 2025-11-25 revision lists runs, the unscored and pending ones too
(``--requirements 2025-11-25``); each one a JSON-only endpoint can pass must pass, and the rest
are listed, with their reasons, in tests/conformance/expected-failures.yaml.

Authorization mode, against initech's authorization server: its metadata, then a whole
authorization code grant, once for a registered client and once for a client id that is a
metadata document; every check must pass, with no warning.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import ROOT
from tests.live.conftest import LiveService, documents_environment, free_port, running_service
from tests.live.interactive_client import ClientRun, run_signing_in
from tests.support.https_documents import HttpsDocuments, run_https_documents
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
# The suite itself waits five minutes for the browser; the played one takes a second or two.
AUTHORIZATION_TIMEOUT = 60.0
OUTPUT_TAIL = 6_000
TENANT_KEY = "conformance"
# The 2025-11-25 revision: server mode at 2026-07-28 is issue 21's work.
REQUIREMENTS = "2025-11-25"
SIGN_IN_TENANT = "initech"
AUTHORIZATION_SCENARIOS = {"authorization-server-metadata-endpoint", "authorization-code-grant"}
CLIENT_DOCUMENT_PATH = "/clients/conformance.json"

# The suite saves each scenario's checks in <output>/<mode>-<scenario>-<ISO time>/checks.json,
# <mode> being "server" or "authorization-server".
_TIMESTAMP = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z"
_SERVER_RESULT_DIR = re.compile(rf"server-(?P<scenario>.+)-{_TIMESTAMP}")
_AUTHORIZATION_RESULT_DIR = re.compile(rf"authorization-server-(?P<scenario>.+)-{_TIMESTAMP}")
_SUMMARY = "=== SUMMARY ==="
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# A warning fails a scenario here, though the suite's exit code counts failures only.
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


def read_results(
    output_dir: Path, result_dir: re.Pattern[str] = _SERVER_RESULT_DIR
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
def client_documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpsDocuments]:
    """A real HTTPS server with a CA of its own, publishing client metadata documents."""
    with run_https_documents(tmp_path_factory.mktemp("client-documents")) as server:
        yield server


@pytest.fixture(scope="module")
def conformance_service(
    tmp_path_factory: pytest.TempPathFactory, client_documents: HttpsDocuments
) -> Iterator[LiveService]:
    """Frontdesk on SQLite, serving the test companies plus the conformance company, able to
    fetch client metadata documents from the tests' HTTPS server."""
    workdir = tmp_path_factory.mktemp("conformance")
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    with running_service(
        "sqlite",
        database_url,
        workdir,
        extra_companies_files=[COMPANIES],
        extra_env=documents_environment(client_documents),
    ) as service:
        yield service


@pytest.fixture(scope="module")
def suite_run(
    conformance_node: Path,
    conformance_service: LiveService,
    tmp_path_factory: pytest.TempPathFactory,
) -> SuiteRun:
    """The server suite of the 2025-11-25 revision run once against the conformance company."""
    output_dir = tmp_path_factory.mktemp("conformance-results")
    command = [
        str(conformance_node),
        str(SUITE),
        "server",
        "--url",
        conformance_service.mcp_url(TENANT_KEY),
        "--requirements",
        REQUIREMENTS,
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


def test_expected_failures_fail_only_for_their_listed_reasons(suite_run: SuiteRun) -> None:
    """Each expected failure is a missing server-to-client message or a stateless session id."""
    reasons = {
        "No log notifications received",
        "No progress notifications received",
        "Server did not request sampling from client",
        "Server did not request elicitation from client",
        "Failed: Method not found: resources/subscribe",
        "Expected 404 on terminated session ID, got 200",
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


@dataclass(frozen=True)
class AuthorizationRun:
    """One run of the suite's authorization mode, with the browser played for its grant."""

    client: ClientRun
    results: dict[str, ScenarioResult]

    def report(self) -> str:
        return self.client.report()


async def run_authorization_mode(
    node: Path, service: LiveService, client_id: str, port: int, output_dir: Path
) -> AuthorizationRun:
    """Both authorization scenarios against initech as ``client_id``, its redirect on ``port``.

    The suite prints the authorize URL for a person and waits for the redirect on
    http://127.0.0.1:<port>/callback; the customer's browser is played for it.
    """
    issuer = f"{service.base_url}/v1/{SIGN_IN_TENANT}/oauth"
    command = [
        str(node),
        str(SUITE),
        "authorization",
        "--url",
        issuer,
        "--client-id",
        client_id,
        "--port",
        str(port),
        "--resource",
        service.mcp_url(SIGN_IN_TENANT),
        "--output-dir",
        str(output_dir),
    ]
    client = await run_signing_in(
        command,
        authorize_url=re.compile(rf"^({re.escape(issuer)}/authorize\?\S+)$"),
        listening=re.compile(r"^Callback server started"),
        cwd=CONFORMANCE,
        env=dict(os.environ),
        deadline=AUTHORIZATION_TIMEOUT,
    )
    return AuthorizationRun(client, read_results(output_dir, _AUTHORIZATION_RESULT_DIR))


def assert_every_check_passes(run: AuthorizationRun) -> None:
    """Both scenarios ran and every check succeeded: no failure, no warning, nothing skipped."""
    assert set(run.results) == AUTHORIZATION_SCENARIOS, run.report()
    problems = [
        f"{check.get('id')}: {check.get('status')}: {check.get('errorMessage', '')}"
        for result in run.results.values()
        for check in result.checks
        if check.get("status") != "SUCCESS"
    ]
    assert not problems, "\n".join(problems) + f"\n\n{run.report()}"
    assert run.client.returncode == 0, run.report()
    [callback] = run.client.callbacks
    assert callback.status_code == 200, run.report()


async def test_authorization_mode_passes_for_a_registered_client(
    conformance_node: Path, conformance_service: LiveService, tmp_path: Path
) -> None:
    """Metadata and a whole code grant for a registered client pass with no warning."""
    port = free_port()
    async with httpx.AsyncClient(timeout=30.0) as http:
        registered = await http.post(
            f"{conformance_service.base_url}/v1/{SIGN_IN_TENANT}/oauth/register",
            json={
                "client_name": "MCP conformance suite",
                "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
            },
        )
    assert registered.status_code == 201, registered.text

    run = await run_authorization_mode(
        conformance_node, conformance_service, registered.json()["client_id"], port, tmp_path
    )

    assert_every_check_passes(run)
    metadata = run.results["authorization-server-metadata-endpoint"].checks
    cimd = next(check for check in metadata if check["id"] == "authorization-server-metadata-cimd")
    assert cimd["details"] == {"client_id_metadata_document_supported": True}


async def test_authorization_mode_passes_for_a_client_id_metadata_document(
    conformance_node: Path,
    conformance_service: LiveService,
    client_documents: HttpsDocuments,
    tmp_path: Path,
) -> None:
    """A code grant whose client id is an HTTPS metadata document passes, no registration."""
    port = free_port()
    client_id = client_documents.url(CLIENT_DOCUMENT_PATH)
    client_documents.serve_json(
        CLIENT_DOCUMENT_PATH,
        {
            "client_id": client_id,
            "client_name": "MCP conformance suite (metadata document)",
            "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )

    run = await run_authorization_mode(
        conformance_node, conformance_service, client_id, port, tmp_path
    )

    assert_every_check_passes(run)
    assert client_documents.requests(CLIENT_DOCUMENT_PATH) >= 1
    [consent_page] = run.client.browser.consent_pages
    assert "MCP conformance suite (metadata document)" in consent_page
