"""The MCP conformance suite (npm ``@modelcontextprotocol/conformance``, pinned in
tests/conformance/package.json) against Frontdesk running as a real process.

Server mode, against the conformance company of tests/conformance/companies.yaml, once per
revision the endpoint serves (``--requirements 2025-11-25`` and ``--requirements 2026-07-28``):
every scenario the revision lists runs, the unscored and pending ones too; each one a JSON-only
endpoint can pass must pass, and the rest are listed, with their reasons, in
tests/conformance/expected-failures-<revision>.yaml. Only the scenarios of an optional
extension the endpoint does not offer (the tasks extension) are not held to passing.

Authorization mode, against initech's authorization server: its metadata, then a whole
authorization code grant, once for a registered client and once for a client id that is a
metadata document; every check must pass, with no warning.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.conformance.suite import (
    AUTHORIZATION_RESULT_DIR,
    COMPANIES,
    CONFORMANCE,
    FAILING,
    SUITE,
    TENANT_KEY,
    ScenarioResult,
    read_results,
    requirements,
)
from tests.live.conftest import LiveService, documents_environment, free_port, running_service
from tests.live.interactive_client import ClientRun, run_signing_in
from tests.support.https_documents import HttpsDocuments, run_https_documents

pytestmark = [pytest.mark.live, pytest.mark.interop]

SUITE_TIMEOUT = 300
# The suite itself waits five minutes for the browser; the played one takes a second or two.
AUTHORIZATION_TIMEOUT = 60.0
OUTPUT_TAIL = 6_000
REVISIONS = ("2025-11-25", "2026-07-28")
# The suite's reason for a scenario it runs but never scores because it belongs to an
# optional extension (SEP-1730: extensions are not required for any tier).
EXTENSION = "extension"
SIGN_IN_TENANT = "initech"
AUTHORIZATION_SCENARIOS = {"authorization-server-metadata-endpoint", "authorization-code-grant"}
CLIENT_DOCUMENT_PATH = "/clients/conformance.json"

_SUMMARY = "=== SUMMARY ==="
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: its exit code, what it printed and every scenario's result."""

    revision: str
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
            f"conformance suite at {self.revision}:\n{suite}\n"
            f"frontdesk serve output (tail):\n{self.service.output()}"
        )


def expected_failures_file(revision: str) -> Path:
    return CONFORMANCE / f"expected-failures-{revision}.yaml"


def expected_failures(revision: str) -> list[str]:
    """The listed failures: a scenario, or one check of it as ``<scenario>:<check-id>``."""
    document = yaml.safe_load(expected_failures_file(revision).read_text())
    return [str(entry) for entry in document["server"]]


def extension_scenarios(revision: str) -> set[str]:
    """The server scenarios the suite's requirement set runs for an optional extension."""
    return {
        str(entry["scenario"])
        for entry in requirements(revision).get("not_scored") or []
        if entry["leg"] == "server" and entry["reason"] == EXTENSION
    }


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


@pytest.fixture(scope="module", params=REVISIONS)
def suite_run(
    request: pytest.FixtureRequest,
    conformance_node: Path,
    conformance_service: LiveService,
    tmp_path_factory: pytest.TempPathFactory,
) -> SuiteRun:
    """The server suite of one revision run once against the conformance company."""
    revision: str = request.param
    output_dir = tmp_path_factory.mktemp(f"conformance-results-{revision}")
    command = [
        str(conformance_node),
        str(SUITE),
        "server",
        "--url",
        conformance_service.mcp_url(TENANT_KEY),
        "--requirements",
        revision,
        "--output-dir",
        str(output_dir),
        "--expected-failures",
        str(expected_failures_file(revision)),
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
        revision=revision,
        returncode=result.returncode,
        printed=result.stdout + result.stderr,
        results=read_results(output_dir),
        service=conformance_service,
    )


def test_every_scenario_passes_except_the_expected_failures(suite_run: SuiteRun) -> None:
    """No check fails unless listed in the revision's expected failures, none listed passes,
    and only the scenarios of an extension not offered are left out."""
    expected = set(expected_failures(suite_run.revision))
    left_out = extension_scenarios(suite_run.revision)
    assert suite_run.results, f"the suite saved no results\n{suite_run.report()}"
    lines: list[str] = []
    for result in suite_run.results.values():
        if result.scenario in left_out or result.scenario in expected:
            continue
        for check in result.checks:
            listed = f"{result.scenario}:{check.get('id')}" in expected
            if check.get("status") in FAILING and not listed:
                lines.append(
                    f"unexpected failure: {result.scenario}: {check.get('id')}:"
                    f" {check.get('status')}: {check.get('errorMessage', '')}"
                )
    for entry in sorted(expected):
        scenario, _, check_id = entry.partition(":")
        run = suite_run.results.get(scenario)
        if run is None:
            lines.append(f"listed as expected to fail but not run: {entry}")
        elif not any(
            check.get("status") in FAILING and check_id in ("", check.get("id"))
            for check in run.checks
        ):
            lines.append(f"passes, so remove it from the expected failures: {entry}")
    assert not lines, "\n".join(lines) + f"\n\n{suite_run.report()}"
    assert suite_run.returncode == 0, (
        f"the suite exited with {suite_run.returncode}\n{suite_run.report()}"
    )


# Why each listed scenario fails, by the suite's own message: a missing server-to-client
# message, or a stateless session id.
_LISTED_REASONS = {
    "No log notifications received",
    "No progress notifications received",
    "Server did not request sampling from client",
    "Server did not request elicitation from client",
    "Failed: Method not found: resources/subscribe",
    "Expected 404 on terminated session ID, got 200",
}


def test_expected_failures_fail_only_for_their_listed_reasons(suite_run: SuiteRun) -> None:
    """Each expected failure is a missing server-to-client message or a stateless session id;
    nothing input-required is listed (tests/conformance/test_two_instances.py)."""
    for entry in expected_failures(suite_run.revision):
        scenario, _, check_id = entry.partition(":")
        for check in suite_run.results[scenario].checks:
            if check.get("status") in FAILING and check_id in ("", check.get("id")):
                assert check.get("errorMessage") in _LISTED_REASONS, (entry, check)


async def test_the_extension_left_out_is_not_offered(
    conformance_service: LiveService,
) -> None:
    """The tasks scenarios may fail only because server/discover offers no extension."""
    assert extension_scenarios("2026-07-28"), "the pinned suite runs no extension scenario"
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    async with httpx.AsyncClient(timeout=30.0) as http:
        response = await http.post(
            conformance_service.mcp_url(TENANT_KEY),
            json=discover,
            headers={"mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"},
        )
    assert response.status_code == 200, response.text
    assert "extensions" not in response.json()["result"]["capabilities"]


def test_dns_rebinding_protection_refuses_a_foreign_host(suite_run: SuiteRun) -> None:
    """A foreign Host is refused with a 4xx while the service's own host is served."""
    checks = {check["id"]: check for check in suite_run.results["dns-rebinding-protection"].checks}
    rejected = checks["localhost-host-rebinding-rejected"]
    accepted = checks["localhost-host-valid-accepted"]
    assert rejected["status"] == "SUCCESS", rejected
    assert rejected["details"]["statusCode"] == 400
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
    return AuthorizationRun(client, read_results(output_dir, AUTHORIZATION_RESULT_DIR))


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
