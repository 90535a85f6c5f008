"""What /proc says of the processes a live test started."""

from __future__ import annotations

from pathlib import Path


def parent_of(pid: int) -> int | None:
    """The parent's pid, or None once the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])
