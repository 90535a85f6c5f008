"""The README cannot drift from what runs: its Python is the examples' (which
tests/live/test_examples.py runs against a real service), and it names the versions and
settings the project really uses."""

from __future__ import annotations

import ast
import json
import re

import pytest

from frontdesk.config import Settings
from tests.conftest import ROOT

README = ROOT / "README.md"
EXAMPLES = ROOT / "examples"
EXCERPT = re.compile(r"# from (examples/[\w/]+\.py)\n")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[str]:
    return PYTHON_BLOCK.findall(README.read_text())


def is_signature(block: str) -> bool:
    """A block that only shows the shape of a function to write (``async def f(...): ...``)."""
    try:
        statements = ast.parse(block).body
    except SyntaxError:  # e.g. a top-level `async with`, which no script can run
        return False
    return bool(statements) and all(
        isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Expr)
        and isinstance(statement.body[0].value, ast.Constant)
        and statement.body[0].value.value is Ellipsis
        for statement in statements
    )


def is_excerpt_of(excerpt: str, source: str) -> bool:
    """Every line of ``excerpt`` is a line of ``source``, in order, all at one indentation."""
    lines = source.splitlines()
    wanted = [line for line in excerpt.splitlines() if line.strip()]
    for indent in range(0, 17, 4):
        remaining = iter(lines)
        if all(any(" " * indent + line == seen for seen in remaining) for line in wanted):
            return True
    return False


def test_every_python_block_is_an_example_file_or_an_excerpt_of_one() -> None:
    examples = {path.read_text(): path for path in EXAMPLES.glob("*.py")}
    shown = set()
    blocks = python_blocks()
    assert blocks, "the README shows no Python"
    for block in blocks:
        if block in examples:
            shown.add(examples[block].name)
            continue
        marked = EXCERPT.match(block)
        if marked is not None:
            source = ROOT / marked[1]
            assert source.exists(), f"the README quotes {marked[1]}, which does not exist"
            excerpt = block[marked.end() :]
            assert is_excerpt_of(excerpt, source.read_text()), (
                f"this README block is no longer what {marked[1]} says:\n{excerpt}"
            )
            shown.add(source.name)
            continue
        assert is_signature(block), (
            "a README Python block must be an examples/ file whole, or start with"
            f" '# from examples/NAME.py' and quote it:\n{block}"
        )
    assert {"guest_call.py", "signed_in_call.py"} <= shown


@pytest.mark.parametrize(
    ("excerpt", "expected"),
    [
        ("async with Client(url) as client:\n    print(result.structured_content)\n", True),
        ("async with Client(url) as client:\n    print(result)\n", False),
        ("print(result.structured_content)\nasync with Client(url) as client:\n", False),
    ],
)
def test_an_excerpt_must_match_its_file_in_order(excerpt: str, expected: bool) -> None:
    source = (EXAMPLES / "guest_call.py").read_text()
    assert is_excerpt_of(excerpt, source) is expected


def test_the_readme_names_the_inspector_the_tests_pin() -> None:
    pinned = json.loads((ROOT / "tests" / "interop" / "package.json").read_text())
    version = pinned["dependencies"]["@modelcontextprotocol/inspector"]
    readme = README.read_text()
    named = set(re.findall(r"@modelcontextprotocol/inspector@([\w.-]+)", readme))
    assert named == {version}
    assert "inspector-cli@" not in readme


def test_every_setting_is_documented() -> None:
    """Each FRONTDESK_* variable the settings read has a row in the README's table."""
    readme = README.read_text()
    missing = [
        f"FRONTDESK_{name.upper()}"
        for name in Settings.model_fields
        if f"`FRONTDESK_{name.upper()}`" not in readme
    ]
    assert missing == []
