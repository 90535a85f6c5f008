"""Every tool's annotations: all five of MCP's ToolAnnotations required when a company is
applied, each one left out refused at its own path, naming the tool; a company stored
before the rule still loads."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk.companies.definition import FROM_STORE, CompanyDefinition
from frontdesk.companies.files import parse_companies
from frontdesk.companies.tool_terms import REQUIRED_ANNOTATIONS, missing_annotations
from frontdesk.errors import ConfigurationError
from tests.support.tool_annotations import read_only

ECHO = {"type": "python", "target": "tests.fixtures.tools:echo"}


def company(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"tenant_key": "acme", "name": "Acme", "tools": list(tools)}


def tool(name: str = "lookup", **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": "Looks an order up.", "provider": ECHO, **fields}


def problems(document: dict[str, Any]) -> list[tuple[tuple[int | str, ...], str]]:
    with pytest.raises(ValidationError) as raised:
        CompanyDefinition.model_validate(document)
    return [(tuple(error["loc"]), error["msg"]) for error in raised.value.errors()]


def test_a_tool_with_all_five_annotations_is_accepted() -> None:
    definition = CompanyDefinition.model_validate(company(tool(annotations=read_only("Look up"))))
    annotations = definition.tools[0].annotations
    assert annotations is not None
    assert annotations.model_dump(by_alias=True) == read_only("Look up")


def test_a_tool_without_annotations_is_refused_naming_it() -> None:
    [(where, message)] = problems(company(tool("cancel_order")))
    assert where == ("tools", 0, "annotations")
    assert "tool 'cancel_order' has no annotations" in message
    for name in REQUIRED_ANNOTATIONS:
        assert name in message


@pytest.mark.parametrize("left_out", REQUIRED_ANNOTATIONS)
def test_each_annotation_left_out_is_refused_at_its_own_path(left_out: str) -> None:
    given = {name: value for name, value in read_only("Look up").items() if name != left_out}
    found = problems(company(tool("refund", annotations=given)))
    assert found == [
        (
            ("tools", 0, "annotations", left_out),
            f"tool 'refund' must give annotations.{left_out} (MCP ToolAnnotations, required"
            " here as the assistant directories require)",
        )
    ]


def test_a_null_annotation_counts_as_left_out() -> None:
    given = {**read_only("Look up"), "destructiveHint": None}
    assert missing_annotations(given) == ["destructiveHint"]
    [(where, _)] = problems(company(tool(annotations=given)))
    assert where == ("tools", 0, "annotations", "destructiveHint")


def test_a_companies_file_names_the_tool_and_the_field() -> None:
    """What ``frontdesk companies apply`` prints: the document's path and the tool."""
    document = {"companies": [company(tool(), tool("cancel", annotations={"title": "Cancel"}))]}
    with pytest.raises(ConfigurationError) as raised:
        parse_companies(document)
    text = str(raised.value)
    assert "companies[0].tools[0].annotations: tool 'lookup' has no annotations" in text
    assert (
        "companies[0].tools[1].annotations.readOnlyHint: tool 'cancel' must give"
        " annotations.readOnlyHint" in text
    )


def test_a_company_stored_before_the_rule_still_loads() -> None:
    """Read back from the store, a tool's missing annotations are served as they were."""
    stored = CompanyDefinition.model_validate(
        company(tool(), tool("partial", annotations={"readOnlyHint": True})), context=FROM_STORE
    )
    assert stored.tools[0].annotations is None
    partial = stored.tools[1].annotations
    assert partial is not None
    assert partial.read_only_hint is True
    assert partial.destructive_hint is None
