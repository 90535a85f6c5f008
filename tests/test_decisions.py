"""The ledger of what we own (docs/decisions/) stays true to the code: every record the
code cites exists, the index lists every record, and every file a record names is there."""

from __future__ import annotations

import re

from tests.conftest import ROOT

DECISIONS = ROOT / "docs" / "decisions"
CITED = re.compile(r"docs/decisions/([a-z0-9-]+\.md)")
# A record's code paths, in backticks: `rsgi_bridge.py`, `store/postgres.py`.
NAMED_FILE = re.compile(r"`((?:[a-z_]+/)*[a-z_]+\.py)")
INDEX_ROW = re.compile(r"^\| \[[^\]]+\]\(([a-z0-9-]+\.md)\)", re.MULTILINE)


def records() -> set[str]:
    return {path.name for path in DECISIONS.glob("*.md")} - {"README.md"}


def test_every_record_the_code_cites_exists() -> None:
    """A comment pointing at docs/decisions/x.md points at a record that is there."""
    missing = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / "src").rglob("*.py")
        for name in CITED.findall(path.read_text())
        if not (DECISIONS / name).is_file()
    ]
    assert missing == []


def test_the_index_lists_every_record_once() -> None:
    listed = INDEX_ROW.findall((DECISIONS / "README.md").read_text())
    assert sorted(listed) == sorted(records())


def test_every_file_a_record_names_is_in_the_package() -> None:
    """Code moves: a record naming a module that is gone says so at once."""
    package = ROOT / "src" / "frontdesk"
    missing = []
    for name in [*sorted(records()), "README.md"]:
        for path in NAMED_FILE.findall((DECISIONS / name).read_text()):
            relative = path.removeprefix("src/frontdesk/")
            if not (package / relative).is_file() and not (ROOT / path).is_file():
                missing.append(f"{name}: {path}")
    assert missing == []


# A measured figure: microseconds, requests per second, or megabytes a worker.
FIGURE = re.compile(r"\d ?(?:µs|us\b)|\breq/s\b|\d ?MB (?:a|per) worker")


def test_no_measured_figure_sits_in_the_code() -> None:
    """The figures live in the records: code keeps a short reason and a pointer, so a
    figure measured again is changed in one place."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if FIGURE.search(line)
    ]
    assert found == []


def test_the_figure_pattern_finds_a_figure() -> None:
    """Control: the pattern sees the forms the figures were written in, not limits."""
    assert FIGURE.search("# saves 23 µs a call")
    assert FIGURE.search("# 3× the req/s on PostgreSQL")
    assert FIGURE.search("# 1.5 MB a worker")
    assert not FIGURE.search("# at most 256 KB in total, a 50 ms flush")
