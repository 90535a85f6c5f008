"""The workers' metrics directory (metrics_files.py): fresh for each run, removed after it,
and what a killed supervisor left behind removed at the next start, but never a directory
whose supervisor still runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from frontdesk.observability.metrics_files import (
    METRICS_DIR_VARIABLE,
    PREFIX,
    remove_abandoned,
    shared_metrics_dir,
)


def a_gone_pid() -> int:
    """The id of a process that has ended (and been collected)."""
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(ended.stdout)


def test_a_run_has_a_directory_of_its_own_named_to_its_workers(tmp_path: Path) -> None:
    with shared_metrics_dir(tmp_path) as shared:
        assert os.environ[METRICS_DIR_VARIABLE] == str(shared)
        assert shared.parent == tmp_path
        assert shared.name.startswith(f"{PREFIX}{os.getpid()}-")
        assert shared.stat().st_mode & 0o777 == 0o700
        (shared / "counter_1.db").write_bytes(b"figures")
    assert not shared.exists()
    assert METRICS_DIR_VARIABLE not in os.environ


def test_the_directory_of_a_supervisor_that_is_gone_is_removed_at_start(tmp_path: Path) -> None:
    abandoned = tmp_path / f"{PREFIX}{a_gone_pid()}-abc123"
    running = tmp_path / f"{PREFIX}{os.getpid()}-def456"
    unrelated = tmp_path / "frontdesk-metrics-notapid"
    for directory in (abandoned, running, unrelated):
        directory.mkdir()
        (directory / "counter_1.db").write_bytes(b"figures")

    with shared_metrics_dir(tmp_path):
        assert not abandoned.exists()
        assert running.exists()
        assert unrelated.exists()


def test_a_link_is_never_followed(tmp_path: Path) -> None:
    """A link named like an abandoned directory is left alone, and so is what it names."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    link = tmp_path / f"{PREFIX}{a_gone_pid()}-abc123"
    link.symlink_to(target)
    remove_abandoned(tmp_path)
    assert link.is_symlink()
    assert (target / "keep").exists()
