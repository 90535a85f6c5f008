"""Where a serving run's workers keep their metrics files (prometheus_client's multiprocess
mode, metrics.py): a directory made fresh for each run and removed after it, and the
directories of earlier runs whose supervisor was killed outright removed at the next start.

The directory's name carries its supervisor's process id. At start, a directory of this
naming in the same place, owned by this user, whose process is gone, is what a SIGKILL (or
the OOM killer) left behind: nothing else can remove it, and each one holds a few files per
worker. A directory whose process id is alive is left alone, whoever that process now is:
removing a running instance's files would reset its figures.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

PREFIX = "frontdesk-metrics-"
# frontdesk-metrics-<supervisor pid>-<mkdtemp's random part>
_NAME = re.compile(rf"{re.escape(PREFIX)}(?P<pid>[0-9]+)-[A-Za-z0-9_]+")
# prometheus_client's multiprocess mode reads this variable when it is first imported, so
# it must be set before a worker starts. The name metrics.MULTIPROCESS_DIR_VARIABLE gives
# too, not imported from there: that module loads prometheus_client, which the supervisor
# never needs.
METRICS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


@contextlib.contextmanager
def shared_metrics_dir(base: Path | None) -> Iterator[Path]:
    """A directory for the workers' metrics files, named to them in the environment they
    start with, and removed when serving ends.

    Fresh on every start: files an earlier run left would be added to this run's totals.
    Private (mkdtemp makes it 0700, with a name no other user can guess or take first):
    the files are memory-mapped by every worker, and whoever could write one could write
    the figures. One directory whatever the number of workers, one included, so that a
    respawned worker's counts add to its predecessor's rather than starting over.
    """
    where = base if base is not None else Path(tempfile.gettempdir())
    remove_abandoned(where)
    shared = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=where)
    os.environ[METRICS_DIR_VARIABLE] = shared
    try:
        yield Path(shared)
    finally:
        # After the workers have stopped: Granian's serve returns once they all have.
        del os.environ[METRICS_DIR_VARIABLE]
        shutil.rmtree(shared, ignore_errors=True)


def remove_abandoned(where: Path) -> None:
    """Remove the metrics directories in ``where`` whose supervisor is gone."""
    try:
        entries = list(where.iterdir())
    except OSError:
        return
    removed = 0
    for entry in entries:
        match = _NAME.fullmatch(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if _alive(int(match["pid"])):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    if removed:
        log.info("metrics_dirs_removed", count=removed, reason="supervisor_gone")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: alive
    return True
