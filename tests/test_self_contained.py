"""A clone stands alone: no tracked file points at documents outside the repository, and
the interface the code cites (``interface 4.2``) is the one docs/interface.md numbers."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT

INTERFACE = ROOT / "docs" / "interface.md"
# A path that leaves the checkout for a sibling folder, or the outside contract's files.
OUTSIDE = re.compile(r"\.\./shared|\bSPEC\.md\b|\bDESIGN\.md\b|\bSPEC \d")
CITATION = re.compile(r"\binterface (\d)\.(\d+)")
HEADING = re.compile(r"^#{2,3} (\d)\.(\d*)", re.MULTILINE)


def tracked_text_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        name
        for name in listed
        if not name.endswith((".lock", ".png", ".json")) and "node_modules" not in name
    ]


def test_no_tracked_file_points_outside_the_repository() -> None:
    """README, docs, code and tests cite docs/interface.md, never a folder beside the clone."""
    offenders = []
    for name in tracked_text_files():
        text = (ROOT / name).read_text(errors="replace")
        offenders += [f"{name}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert offenders == []


def test_every_cited_part_of_the_interface_exists() -> None:
    """A comment citing "interface 7.1" names a part docs/interface.md has."""
    parts = {(major, minor or "") for major, minor in HEADING.findall(INTERFACE.read_text())}
    sections = {major for major, _ in parts}
    subdivided = {major for major, minor in parts if minor}
    missing = []
    for name in tracked_text_files():
        for major, minor in CITATION.findall((ROOT / name).read_text(errors="replace")):
            # "interface 4.2" cites a subsection; "interface 3.2" an item of part 3, whose
            # rules are a numbered list.
            known = (major, minor) in parts if major in subdivided else major in sections
            if not known:
                missing.append(f"{name}: interface {major}.{minor}")
    assert missing == []
