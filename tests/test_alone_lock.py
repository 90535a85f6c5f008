"""The lock that lets a test run alone in a parallel run (tests/support/alone.py): each
RunLock below stands for one worker (flock(2) locks belong to an open file, so two handles
in one process exclude each other as two processes would)."""

from __future__ import annotations

import fcntl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.alone import RunLock

DEADLINE = 10.0


@pytest.fixture
def stem(tmp_path: Path) -> Path:
    return tmp_path / "run"


def free(path: Path, operation: int) -> bool:
    """Whether ``operation`` on ``path`` would be granted now (asked without waiting)."""
    with path.open("ab") as probe:
        try:
            fcntl.flock(probe, operation | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(probe, fcntl.LOCK_UN)
        return True


class Holder(threading.Thread):
    """Holds ``lock`` (as a worker would for one test) until told to let go."""

    def __init__(self, lock: RunLock, *, exclusive: bool) -> None:
        super().__init__(daemon=True)
        self.lock, self.exclusive = lock, exclusive
        self.holding, self.let_go = threading.Event(), threading.Event()

    def run(self) -> None:
        with self.lock.held(exclusive=self.exclusive):
            self.holding.set()
            self.let_go.wait(DEADLINE)

    def end(self) -> None:
        self.let_go.set()
        self.join(DEADLINE)
        assert not self.is_alive()


@pytest.fixture
def workers(stem: Path) -> Iterator[list[RunLock]]:
    locks = [RunLock(stem) for _ in range(3)]
    try:
        yield locks
    finally:
        for lock in locks:
            lock.close()


@pytest.fixture
def holders(workers: list[RunLock]) -> Iterator[list[Holder]]:
    """A holder per worker, in their order; each lets go at the end, even of a failed test,
    before its lock is closed."""
    made = [Holder(lock, exclusive=index == 1) for index, lock in enumerate(workers)]
    try:
        yield made
    finally:
        for holder in made:
            holder.let_go.set()
        for holder in made:
            if holder.is_alive():
                holder.join(DEADLINE)


def test_tests_of_other_workers_run_side_by_side(workers: list[RunLock], stem: Path) -> None:
    first, second, _ = workers
    with first.held(exclusive=False), second.held(exclusive=False):
        assert not free(stem.with_suffix(".lock"), fcntl.LOCK_EX)


def test_an_alone_test_waits_for_the_running_test_and_the_next_one_waits_for_it(
    holders: list[Holder], stem: Path
) -> None:
    first, alone, later = holders
    first.start()
    assert first.holding.wait(DEADLINE)
    alone.start()
    # Queued behind the running test, the alone test holds the turnstile: a test starting
    # now on a third worker waits instead of slipping in ahead of it.
    queued_by = time.monotonic() + DEADLINE
    while free(stem.with_suffix(".turnstile"), fcntl.LOCK_EX):
        assert time.monotonic() < queued_by, "the alone test never queued"
    assert not alone.holding.is_set()
    later.start()
    assert not later.holding.wait(0.2)  # it would have had the lock at once without the queue
    assert not alone.holding.is_set()

    first.end()
    assert alone.holding.wait(DEADLINE)
    assert not later.holding.is_set()
    assert not free(stem.with_suffix(".lock"), fcntl.LOCK_SH)

    alone.end()
    assert later.holding.wait(DEADLINE)
    later.end()
    assert free(stem.with_suffix(".lock"), fcntl.LOCK_EX)
