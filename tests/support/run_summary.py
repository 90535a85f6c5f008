"""Sections a test plugin prints where the run ends, also when the tests ran on workers.

With pytest-xdist the tests run in worker processes whose own terminal nobody sees; what a
worker wants printed travels to the run's controller with the rest of its report (xdist's
``workeroutput``, sent once the worker's session has finished) and is printed there, once
per worker that had something to say.
"""

from __future__ import annotations

from typing import Any

import pytest

WORKER_OUTPUT = "frontdesk_summary"
_SECTIONS = pytest.StashKey[list[tuple[str, list[str]]]]()


def add(config: pytest.Config, title: str, lines: list[str]) -> None:
    """A section for the end of the run; call it by ``pytest_sessionfinish`` at the latest."""
    worker_output: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if worker_output is not None:
        worker_output.setdefault(WORKER_OUTPUT, []).append([title, lines])
    else:
        config.stash.setdefault(_SECTIONS, []).append((title, lines))


def gather(config: pytest.Config, worker_output: dict[str, Any]) -> None:
    """On the controller, as a worker finishes: the sections it added."""
    for title, lines in worker_output.get(WORKER_OUTPUT, []):
        add(config, str(title), [str(line) for line in lines])


def write(terminal: pytest.TerminalReporter, config: pytest.Config) -> None:
    for title, lines in config.stash.get(_SECTIONS, []):
        terminal.write_sep("=", title)
        for line in lines:
            terminal.write_line(line)
