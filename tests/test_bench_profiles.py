"""The bench's py-spy summary (bench/benchkit/profiles.py): stacks from a server whose
workers are a supervisor's children, as py-spy's --subprocesses records them."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.profiles import summarise

SUPERVISOR = 'process 10:"python frontdesk serve --port 1 --workers 1"'
WORKER = 'process 11:"python -B -c from multiprocessing.spawn import spawn_main; spawn_main(x=8)"'
LOOP = "run (asyncio/runners.py:118);_post (frontdesk/protocol/endpoint.py:90)"
THREAD = "_bootstrap (threading.py:1002);run (threading.py:982);wait (threading.py:320)"


def test_process_names_are_not_taken_for_frames(tmp_path: Path) -> None:
    stacks = tmp_path / "profile.collapsed"
    stacks.write_text(
        f"{SUPERVISOR};{WORKER};{LOOP};send (frontdesk/web/edge.py:40) 3\n"
        f"{SUPERVISOR};{WORKER};{LOOP} 1\n"
        f"{SUPERVISOR};{WORKER};{THREAD} 4\n"
        # A sample in no Python frame at all: only its processes.
        f"{SUPERVISOR};{WORKER} 2\n"
    )
    found = summarise("guest-call", stacks, top=5)
    assert found.samples == 8
    assert found.main_share == pytest.approx(0.5)
    assert found.own == [
        ("send (frontdesk/web/edge.py)", 0.75),
        ("_post (frontdesk/protocol/endpoint.py)", 0.25),
    ]
    assert found.packages == [("frontdesk", 1.0)]
    assert found.threads == [("wait (threading.py)", 0.5)]
