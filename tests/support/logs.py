"""What a module logs during a test, as structlog's event dicts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType

import pytest
import structlog
from structlog.typing import EventDict


@contextlib.contextmanager
def captured_logs(
    monkeypatch: pytest.MonkeyPatch, *modules: ModuleType
) -> Iterator[list[EventDict]]:
    """Every event logged inside the block, through the ``log`` of each of ``modules``.

    Each module gets a logger of its own for the test: one that an earlier test cached
    (structlog's cache_logger_on_first_use) would bypass capture_logs.
    """
    for module in modules:
        monkeypatch.setattr(module, "log", structlog.get_logger(module.__name__))
    with structlog.testing.capture_logs() as logs:
        yield logs
