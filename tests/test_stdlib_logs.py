"""Standard-library log records (Granian's, any library's) as the JSON lines every other log
line is, through the configuration `frontdesk serve` hands Granian (``log_dictconfig``)."""

from __future__ import annotations

import logging
import logging.config
from collections.abc import Iterator

import orjson
import pytest

from frontdesk.observability.logs import stdlib_log_config


@pytest.fixture
def restored() -> Iterator[None]:
    """The logging configuration as it was, after the test changed it."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name in ("_granian", "granian.access"):
            logging.getLogger(name).handlers.clear()


def test_granian_and_library_records_are_json_lines_with_a_traceback(
    restored: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # Configured here, while the output is captured: the handler keeps the stderr it finds.
    logging.config.dictConfig(stdlib_log_config())
    logging.getLogger("_granian").error("Unexpected exit from %s", "worker-1")
    try:
        raise ValueError("broken")
    except ValueError:
        logging.getLogger("some.library").warning("it failed", exc_info=True)
    # Below the level: not written.
    logging.getLogger("some.library").info("chatter")
    lines = [orjson.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["logger"], line["level"], line["event"]) for line in lines] == [
        ("_granian", "error", "Unexpected exit from worker-1"),
        ("some.library", "warning", "it failed"),
    ]
    assert "ValueError: broken" in lines[1]["exception"]
    assert all(line["timestamp"].endswith("Z") for line in lines)
