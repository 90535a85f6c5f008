"""The conformance suite's ``input-required-result-*`` scenarios (MCP 2026-07-28) against TWO
Frontdesk processes behind one address, alternated request by request.

A tool that asks the client for input answers with a sealed ``requestState``; the client sends
the call again with its answers and that state, and whichever instance receives it must
continue the call (docs/design.md: the state is sealed with the shared FRONTDESK_SECRET_KEYS,
nothing is stored between the rounds). Here a round-robin proxy (tests/support/
alternating_proxy.py) sends each request to the other instance than the one before, the
instances sharing one SQLite file, one secret and one public address; its record shows which
instance issued each state and which one took it back.

The requirement set's scenarios are run one by one (the suite's ``--requirements`` option
cannot be combined with ``--scenario``): ``--scenario NAME --spec-version 2026-07-28 --force``
runs a scenario exactly as ``--requirements 2026-07-28`` does, at that revision's wire.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.suite import (
    COMPANIES,
    CONFORMANCE,
    SUITE,
    TENANT_KEY,
    ScenarioResult,
    read_results,
    requirements,
)
from tests.live.conftest import LiveService, free_port, running_service
from tests.support.alternating_proxy import AlternatingProxy, Forwarded, run_alternating_proxy

pytestmark = [pytest.mark.live, pytest.mark.interop]

REVISION = "2026-07-28"
INPUT_REQUIRED = "input-required-result-"
# The number the issue names; a pinned suite that runs another number is a suite to re-read.
SCENARIO_COUNT = 14
# A scenario takes well under a second; the suite's own per-scenario timeout is 30 s.
SCENARIO_TIMEOUT = 60
OUTPUT_TAIL = 3_000


@dataclass(frozen=True)
class Alternated:
    """Two instances on one database behind the alternating proxy."""

    proxy: AlternatingProxy
    instances: tuple[LiveService, LiveService]

    def mcp_url(self) -> str:
        return f"{self.proxy.base_url}/v1/{TENANT_KEY}/mcp"


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario run through the proxy: the suite's exit code and output, its checks, and
    every request it sent, as forwarded."""

    scenario: str
    returncode: int
    printed: str
    forwarded: list[Forwarded]

    def report(self, alternated: Alternated) -> str:
        logs = "\n".join(
            f"frontdesk serve output (instance {index}, tail):\n{instance.output()}"
            for index, instance in enumerate(alternated.instances)
        )
        return f"{self.scenario}:\n{self.printed[-OUTPUT_TAIL:]}\n{logs}"


@dataclass(frozen=True)
class SuiteRuns:
    runs: dict[str, ScenarioRun]
    results: dict[str, ScenarioResult]
    alternated: Alternated


def input_required_scenarios() -> list[str]:
    """The requirement set's input-required server scenarios, in the suite's order."""
    return [
        str(scenario)
        for scenario in requirements(REVISION)["server"]
        if str(scenario).startswith(INPUT_REQUIRED)
    ]


@pytest.fixture(scope="module")
def alternated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Alternated]:
    """Instances 0 and 1, one SQLite file, one secret, the proxy's address as their public
    one. SQLite is enough: continuing a call needs nothing stored, only the secret key."""
    workdir = tmp_path_factory.mktemp("two-instances")
    database_url = f"sqlite+aiosqlite:///{workdir / 'frontdesk.db'}"
    proxy_port = free_port()
    public_url = f"http://127.0.0.1:{proxy_port}"
    with contextlib.ExitStack() as stack:
        first, second = (
            stack.enter_context(
                running_service(
                    "sqlite",
                    database_url,
                    workdir,
                    extra_companies_files=[COMPANIES],
                    public_url=public_url,
                )
            )
            for _ in range(2)
        )
        proxy = stack.enter_context(
            run_alternating_proxy([first.base_url, second.base_url], port=proxy_port)
        )
        yield Alternated(proxy, (first, second))


@pytest.fixture(scope="module")
def suite_runs(
    conformance_node: Path, alternated: Alternated, tmp_path_factory: pytest.TempPathFactory
) -> SuiteRuns:
    """Each input-required scenario once, through the proxy, one after the other."""
    output_dir = tmp_path_factory.mktemp("two-instances-results")
    runs: dict[str, ScenarioRun] = {}
    for scenario in input_required_scenarios():
        already = len(alternated.proxy.forwarded())
        command = [
            str(conformance_node),
            str(SUITE),
            "server",
            "--url",
            alternated.mcp_url(),
            "--scenario",
            scenario,
            "--spec-version",
            REVISION,
            "--force",
            "--output-dir",
            str(output_dir),
        ]
        completed = subprocess.run(
            command,
            cwd=CONFORMANCE,
            capture_output=True,
            text=True,
            timeout=SCENARIO_TIMEOUT,
            check=False,
        )
        runs[scenario] = ScenarioRun(
            scenario,
            completed.returncode,
            completed.stdout + completed.stderr,
            alternated.proxy.forwarded()[already:],
        )
    return SuiteRuns(runs, read_results(output_dir), alternated)


def _params(exchange: Forwarded) -> dict[str, Any]:
    body = exchange.json_body()
    params = body.get("params") if isinstance(body, dict) else None
    return params if isinstance(params, dict) else {}


def _issued_state(exchange: Forwarded) -> str | None:
    """The requestState an input-required result carried, if this answer was one."""
    answer = exchange.json_answer()
    result = answer.get("result") if isinstance(answer, dict) else None
    state = result.get("requestState") if isinstance(result, dict) else None
    return state if isinstance(state, str) else None


def handed_over(forwarded: list[Forwarded]) -> list[tuple[int, int]]:
    """For each request that brought a requestState back: (the instance that issued that
    state, the instance that received it back)."""
    issuers: dict[str, int] = {}
    pairs: list[tuple[int, int]] = []
    for exchange in forwarded:
        state = _params(exchange).get("requestState")
        if isinstance(state, str) and state in issuers:
            pairs.append((issuers[state], exchange.upstream))
        issued = _issued_state(exchange)
        if issued is not None:
            issuers[issued] = exchange.upstream
    return pairs


def test_the_input_required_scenarios_pass_on_two_alternated_instances(
    suite_runs: SuiteRuns,
) -> None:
    """All fourteen pass, with no failure and no warning, through both instances."""
    assert len(suite_runs.runs) == SCENARIO_COUNT, sorted(suite_runs.runs)
    alternated = suite_runs.alternated
    for scenario, run in suite_runs.runs.items():
        result = suite_runs.results.get(scenario)
        assert result is not None, f"no result saved\n{run.report(alternated)}"
        assert result.checks, f"no check ran\n{run.report(alternated)}"
        assert not result.failed, "\n".join(result.problems()) + f"\n\n{run.report(alternated)}"
        assert run.returncode == 0, run.report(alternated)
        assert run.forwarded, f"nothing went through the proxy\n{run.report(alternated)}"
    answered_by = {exchange.upstream for exchange in alternated.proxy.forwarded()}
    assert answered_by == {0, 1}


# The scenarios that send a requestState back as it was issued; tampered-state sends an
# altered one (refused, by the other instance too), the rest answer in one round.
SENDING_A_STATE_BACK = {
    f"{INPUT_REQUIRED}{name}"
    for name in (
        "basic-elicitation",
        "basic-sampling",
        "basic-list-roots",
        "request-state",
        "multiple-input-requests",
        "multi-round",
        "non-tool-request",
    )
}


def test_each_request_state_is_taken_back_by_the_other_instance(suite_runs: SuiteRuns) -> None:
    """Every state one instance issued and the suite sent back was continued by the other
    instance: the calls that ask the customer hold across instances."""
    handed = {scenario: handed_over(run.forwarded) for scenario, run in suite_runs.runs.items()}
    assert {scenario for scenario, pairs in handed.items() if pairs} == SENDING_A_STATE_BACK, handed
    assert len(handed[f"{INPUT_REQUIRED}multi-round"]) == 2, handed
    for scenario in SENDING_A_STATE_BACK:
        for issuer, continuer in handed[scenario]:
            assert issuer != continuer, f"{scenario}: instance {issuer} got its own state back"
