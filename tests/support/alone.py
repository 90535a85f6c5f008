"""Tests that run while no other test does, when the suite runs on several workers at once.

``./scripts/test`` runs the suite on every core (pytest-xdist). A test whose figures depend on
having the machine's cores to itself (latency under load, a stop within a deadline, timing
differences) is marked ``alone``: it then holds one lock of the run exclusively, while every
other test holds it shared, so it starts once the other workers' current tests have ended
and theirs start again once it has ended. The lock is flock(2) on a file of the run: many
shared holders or one exclusive one, released by the kernel if a worker dies; its folder
is made per run by the run's controller (see ``share_with``).

An exclusive holder queues at a turnstile first and keeps it until it holds the lock, so a
worker that starts test after test cannot keep an ``alone`` test waiting for ever: the
next shared holder waits at the turnstile behind it.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

MARKER = "alone"  # registered in pyproject.toml


class RunLock:
    """One run's lock on two files named by ``stem``, shared by all of its workers."""

    def __init__(self, stem: Path) -> None:
        self._turnstile: IO[bytes] = stem.with_suffix(".turnstile").open("ab")
        self._lock: IO[bytes] = stem.with_suffix(".lock").open("ab")

    @contextlib.contextmanager
    def held(self, *, exclusive: bool) -> Iterator[None]:
        fcntl.flock(self._turnstile, fcntl.LOCK_EX)
        if not exclusive:
            fcntl.flock(self._turnstile, fcntl.LOCK_UN)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if exclusive:
                fcntl.flock(self._turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)

    def close(self) -> None:
        self._turnstile.close()
        self._lock.close()


_FOLDER = pytest.StashKey[Path]()
_LOCK = pytest.StashKey[RunLock]()
WORKER_INPUT = "frontdesk_run_lock"


def share_with(config: pytest.Config, worker_input: dict[str, object]) -> None:
    """On the run's controller, as a worker starts: the folder of the run's lock, made for
    this run (and removed by ``remove``), so that another run at the same time has its own."""
    folder = config.stash.get(_FOLDER, None)
    if folder is None:
        folder = config.stash[_FOLDER] = Path(tempfile.mkdtemp(prefix="frontdesk-tests-"))
    worker_input[WORKER_INPUT] = str(folder)


def remove(config: pytest.Config) -> None:
    """On the controller once the run is over (its workers with it): the lock's folder."""
    folder = config.stash.get(_FOLDER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def run_lock(config: pytest.Config) -> RunLock | None:
    """This worker's handle on the run's lock, or None when the tests run in one process
    (there no two tests ever overlap)."""
    folder = getattr(config, "workerinput", {}).get(WORKER_INPUT)
    if folder is None:
        return None
    found = config.stash.get(_LOCK, None)
    if found is None:
        found = config.stash[_LOCK] = RunLock(Path(folder) / "run")
    return found


def hold_for(item: pytest.Item) -> contextlib.AbstractContextManager[None]:
    """What ``item`` holds from its setup to its teardown."""
    lock = run_lock(item.config)
    if lock is None:
        return contextlib.nullcontext()
    return lock.held(exclusive=item.get_closest_marker(MARKER) is not None)


def release(config: pytest.Config) -> None:
    """On a worker at the end of its session: its handles on the lock's files."""
    lock = config.stash.get(_LOCK, None)
    if lock is not None:
        lock.close()
