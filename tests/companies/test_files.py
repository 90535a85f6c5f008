"""The companies file: every problem is reported with the path of the field at fault."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from frontdesk.companies.files import parse_companies, read_companies_file
from frontdesk.companies.seed import DEMO_FILE
from frontdesk.errors import ConfigurationError
from tests.support.tool_annotations import read_only

FIXTURE_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "companies.yaml"

Document = dict[str, Any]


def python_tool(name: str, target: str = "tests.fixtures.tools:echo") -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": read_only(name),
        "provider": {"type": "python", "target": target},
    }


def valid_document() -> Document:
    """Two good companies; each case below breaks exactly one thing in it."""
    return {
        "companies": [
            {
                "tenant_key": "acme",
                "name": "Acme Corp",
                "rate_limit": "100/minute",
                "tools": [python_tool("echo"), python_tool("add", "tests.fixtures.tools:add")],
                "resources": [{"uri": "acme://catalog", "name": "catalog", "text": "Anvils"}],
                "resource_templates": [
                    {"uri_template": "acme://anvils/{model}", "name": "anvil"},
                ],
                "prompts": [
                    {
                        "name": "greet",
                        "arguments": [{"name": "who", "required": True}],
                        "messages": [{"role": "user", "text": "Say hello to {who}."}],
                    }
                ],
            },
            {"tenant_key": "globex", "name": "Globex", "tools": [python_tool("echo")]},
        ]
    }


def broken(change: Callable[[Document], object]) -> Document:
    document = copy.deepcopy(valid_document())
    change(document)
    return document


def problem(document: Document) -> str:
    with pytest.raises(ConfigurationError) as caught:
        parse_companies(document)
    return str(caught.value)


def acme(document: Document) -> dict[str, Any]:
    return document["companies"][0]  # type: ignore[no-any-return]


CASES: dict[str, tuple[Callable[[Document], object], str]] = {
    "bad tenant key": (
        lambda d: acme(d).update(tenant_key="Acme_Corp"),
        "companies[0].tenant_key: String should match pattern",
    ),
    "duplicate tenant keys": (
        lambda d: d["companies"][1].update(tenant_key="acme"),
        "companies[1].tenant_key: two companies share the tenant_key 'acme'",
    ),
    "duplicate tool names": (
        lambda d: acme(d)["tools"][1].update(name="echo"),
        "companies[0].tools[1].name: two tools share the name 'echo'",
    ),
    "invalid JSON Schema": (
        lambda d: acme(d)["tools"][1].update(
            input_schema={"type": "object", "properties": {"a": {"type": "integr"}}}
        ),
        "companies[0].tools[1].input_schema: is not a valid JSON Schema",
    ),
    "input schema not an object": (
        lambda d: acme(d)["tools"][0].update(input_schema={"type": "string"}),
        'companies[0].tools[0].input_schema: must be a JSON Schema whose "type" is "object"',
    ),
    "unknown field on a company": (
        lambda d: d["companies"][1].update(tols=[]),
        "companies[1].tols: Extra inputs are not permitted",
    ),
    "unknown field on a tool": (
        lambda d: acme(d)["tools"][1].update(descripton="typo"),
        "companies[0].tools[1].descripton: Extra inputs are not permitted",
    ),
    "bad rate limit": (
        lambda d: acme(d).update(rate_limit="lots per minute"),
        'companies[0].rate_limit: must read like "120/minute"',
    ),
    "provider module missing": (
        lambda d: acme(d)["tools"][1]["provider"].update(target="tests.fixtures.nowhere:add"),
        "companies[0].tools[1].provider.target: cannot import module 'tests.fixtures.nowhere'",
    ),
    "provider attribute missing": (
        lambda d: d["companies"][1]["tools"][0]["provider"].update(
            target="tests.fixtures.tools:missing"
        ),
        "companies[1].tools[0].provider.target: 'tests.fixtures.tools' has no 'missing'",
    ),
    "provider not async": (
        lambda d: acme(d)["tools"][1]["provider"].update(target="tests.fixtures.tools:not_async"),
        "companies[0].tools[1].provider.target: 'tests.fixtures.tools:not_async'"
        " must be an async function",
    ),
    "resource with text and blob": (
        lambda d: acme(d)["resources"][0].update(blob_base64="AA=="),
        "companies[0].resources[0]: give exactly one of text, blob_base64 or provider",
    ),
    "resource with neither text nor blob": (
        lambda d: acme(d)["resources"][0].pop("text"),
        "companies[0].resources[0]: give exactly one of text, blob_base64 or provider",
    ),
    "prompt using an undeclared argument": (
        lambda d: acme(d)["prompts"][0]["messages"][0].update(text="Hello {who}, from {whom}."),
        "companies[0].prompts[0]: messages use undeclared arguments: ['whom']",
    ),
    "completion for a variable not in the template": (
        lambda d: acme(d)["resource_templates"][0].update(completions={"colour": ["red"]}),
        "companies[0].resource_templates[0]: completions name variables not in the template:"
        " ['colour']",
    ),
}


def test_the_valid_document_passes() -> None:
    """The document every case breaks is itself valid, so each case proves one rule."""
    parsed = parse_companies(valid_document())
    assert [company.tenant_key for company in parsed.companies] == ["acme", "globex"]


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_field_is_reported_at_its_path(case: str) -> None:
    """Each kind of mistake is refused with the path of the field at fault."""
    change, expected = CASES[case]
    assert problem(broken(change)).startswith(expected)


def test_every_problem_is_reported_not_only_the_first() -> None:
    """An operator fixes a file in one pass: all its problems are listed together."""

    def two_problems(document: Document) -> None:
        acme(document).update(tenant_key="BAD")
        document["companies"][1].update(rate_limit="often")

    lines = problem(broken(two_problems)).splitlines()
    assert [line.split(":", 1)[0] for line in lines] == [
        "companies[0].tenant_key",
        "companies[1].rate_limit",
    ]


def test_every_unloadable_provider_is_reported() -> None:
    """Each python provider that cannot be loaded is listed on a line of its own."""

    def two_bad_targets(document: Document) -> None:
        acme(document)["tools"][0]["provider"].update(target="tests.fixtures.tools:not_async")
        document["companies"][1]["tools"][0]["provider"].update(target="nowhere.at.all:f")

    lines = problem(broken(two_bad_targets)).splitlines()
    assert [line.split(":", 1)[0] for line in lines] == [
        "companies[0].tools[0].provider.target",
        "companies[1].tools[0].provider.target",
    ]


@pytest.mark.parametrize("document", [None, [], "companies", 42])
def test_a_document_that_is_not_a_mapping_is_refused(document: object) -> None:
    """A file whose top level is not a mapping is refused as a whole."""
    with pytest.raises(ConfigurationError, match=r"^\(file\): "):
        parse_companies(document)


def test_a_file_without_companies_is_refused() -> None:
    """An empty companies list is refused: applying it could only be a mistake."""
    with pytest.raises(ConfigurationError, match=r"^companies: List should have at least 1"):
        parse_companies({"companies": []})


def test_invalid_yaml_is_refused_with_the_file_name(tmp_path: Path) -> None:
    """A file that does not parse as YAML says so, naming the file."""
    path = tmp_path / "companies.yaml"
    path.write_text("companies:\n  - tenant_key: acme\n   name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="is not valid YAML or JSON") as caught:
        read_companies_file(path)
    assert str(path) in str(caught.value)


def test_a_missing_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    """A file that does not exist is refused with the path and the system's reason."""
    path = tmp_path / "absent.yaml"
    with pytest.raises(ConfigurationError, match=r"cannot read .*absent\.yaml: No such file"):
        read_companies_file(path)


def test_a_directory_is_refused_as_unreadable(tmp_path: Path) -> None:
    """A path that cannot be read as a file is refused, not crashed on."""
    with pytest.raises(ConfigurationError, match="cannot read"):
        read_companies_file(tmp_path)


def test_a_json_file_is_read_like_yaml(tmp_path: Path) -> None:
    """JSON, being YAML, is accepted as a companies file."""
    path = tmp_path / "companies.json"
    path.write_bytes(orjson.dumps(valid_document()))
    assert read_companies_file(path) == parse_companies(valid_document())


def test_a_yaml_file_is_read_with_its_path_errors(tmp_path: Path) -> None:
    """Errors found in a file on disk carry the same field paths."""
    path = tmp_path / "companies.yaml"
    document = broken(lambda d: acme(d)["tools"][1].update(name="echo"))
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"^companies\[0\]\.tools\[1\]\.name: "):
        read_companies_file(path)


@pytest.mark.parametrize("path", [FIXTURE_FILE, DEMO_FILE], ids=["fixtures", "demo"])
def test_the_shipped_files_are_valid(path: Path) -> None:
    """The demo company and the test companies pass every check."""
    assert read_companies_file(path).companies
