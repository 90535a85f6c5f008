"""The bounded fuzz run (``python -m tests.adversarial.fuzz``) as part of the suite: a few
thousand inputs through each parser, in a process of its own so that atheris can
instrument the modules before they are imported."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

REPORT = re.compile(r"fuzz: (\d+) inputs tried \(form=(\d+), jsonrpc=(\d+), registration=(\d+)\)")


def fuzz(*arguments: str) -> re.Match[str]:
    """Run the fuzzer; the report of a run that broke no rule."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.adversarial.fuzz", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = REPORT.search(done.stderr)
    assert report is not None, done.stderr[-4000:]
    return report


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris is not installed")
def test_a_coverage_guided_run_breaks_no_rule() -> None:
    """20,000 atheris inputs across the three parsers: every one refused cleanly or valid."""
    report = fuzz("--runs", "20000", "--engine", "atheris", "--seed", "20261121")
    total, *per_target = map(int, report.groups())
    assert total == 20_000
    assert all(count > 1_000 for count in per_target), report[0]


def test_the_hypothesis_run_breaks_no_rule() -> None:
    """The fallback where atheris cannot install: the same targets under hypothesis."""
    report = fuzz("--runs", "600", "--engine", "hypothesis")
    assert all(int(count) >= 100 for count in report.groups()[1:]), report[0]
