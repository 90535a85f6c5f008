"""The company model: what a definition may hold, and where a bad one is pointed at."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk.companies.definition import (
    FROM_STORE,
    Access,
    CompanyDefinition,
    PromptDefinition,
    ResourceDefinition,
    ResourceTemplateDefinition,
    ToolDefinition,
)
from frontdesk.config import Region
from tests.support.tool_annotations import read_only

ECHO = {"type": "python", "target": "tests.fixtures.tools:echo"}


def tool(name: str = "echo", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Repeats text.",
        "annotations": read_only("Echo"),
        "provider": ECHO,
        **fields,
    }


def company(**fields: Any) -> dict[str, Any]:
    return {"tenant_key": "acme", "name": "Acme Corp", **fields}


def locations(error: ValidationError) -> list[tuple[int | str, ...]]:
    return [tuple(problem["loc"]) for problem in error.errors()]


def test_a_company_needs_only_a_key_and_a_name() -> None:
    """A minimal company is active, in the default region, and offers nothing yet."""
    definition = CompanyDefinition.model_validate(company())
    assert definition.region is Region.EU
    assert definition.active is True
    assert definition.rate_limit is None
    assert (definition.tools, definition.resources, definition.prompts) == ([], [], [])


def test_a_tool_without_input_schema_takes_any_object() -> None:
    """A tool with no input_schema is public and accepts an object of any shape."""
    definition = ToolDefinition.model_validate(tool())
    assert definition.input_schema == {"type": "object"}
    assert definition.access is Access.PUBLIC


def test_tool_annotations_use_the_mcp_names_both_ways() -> None:
    """Annotations are read and written under MCP's camelCase names."""
    definition = ToolDefinition.model_validate(tool(annotations=read_only("Echo")))
    assert definition.annotations is not None
    assert definition.annotations.read_only_hint is True
    assert definition.annotations.model_dump(by_alias=True, exclude_none=True) == read_only("Echo")


def test_a_stored_definition_validates_back_to_the_same_company() -> None:
    """The JSON the store keeps validates back to an equal definition (nothing is lost)."""
    definition = CompanyDefinition.model_validate(
        company(
            rate_limit="10/second",
            tools=[tool(access="personal", timeout=2.5)],
            resources=[{"uri": "acme://logo", "name": "logo", "blob_base64": "AA=="}],
            resource_templates=[
                {"uri_template": "acme://a/{id}", "name": "a", "completions": {"id": ["1"]}}
            ],
            prompts=[{"name": "p", "messages": [{"role": "user", "text": "hi"}]}],
        )
    )
    stored = definition.model_dump(mode="json", by_alias=True)
    assert CompanyDefinition.model_validate(stored) == definition


@pytest.mark.parametrize("name", ["has space", "", "x" * 129, "slash/name", "émoji"])
def test_a_tool_name_outside_the_mcp_alphabet_is_refused(name: str) -> None:
    """Tool names are 1-128 letters, digits, '_', '-' or '.', as MCP requires."""
    with pytest.raises(ValidationError) as caught:
        ToolDefinition.model_validate(tool(name))
    assert locations(caught.value) == [("name",)]


@pytest.mark.parametrize("name", ["a", "get_order.v2", "x" * 128, "A-b_c.d"])
def test_a_tool_name_inside_the_mcp_alphabet_is_accepted(name: str) -> None:
    """Names built from MCP's tool-name alphabet pass."""
    assert ToolDefinition.model_validate(tool(name)).name == name


@pytest.mark.parametrize("timeout", [0, -1, 301])
def test_a_tool_timeout_outside_its_bounds_is_refused(timeout: float) -> None:
    """A tool's timeout is above zero and at most five minutes."""
    with pytest.raises(ValidationError) as caught:
        ToolDefinition.model_validate(tool(timeout=timeout))
    assert locations(caught.value) == [("timeout",)]


def test_an_output_schema_must_describe_an_object_too() -> None:
    """structuredContent is an object, so an output_schema of another type is refused."""
    with pytest.raises(ValidationError) as caught:
        ToolDefinition.model_validate(tool(output_schema={"type": "array"}))
    assert locations(caught.value) == [("output_schema",)]


@pytest.mark.parametrize("context", [None, FROM_STORE], ids=["applied", "read back"])
@pytest.mark.parametrize(
    ("property_schema", "says"),
    [
        # Each says which tool, and where in its schema (or which keyword): a regex.
        (
            {"type": "no-such-type"},
            r"is not a valid JSON Schema for tool 'echo': #/properties/colour/type: ",
        ),
        # The metaschema lets these pass; serving could not use them.
        ({"$ref": "#/$defs/colour"}, r"tool 'echo': \$ref: Pointer '/\$defs/colour' does not"),
        ({"$ref": "https://example.com/colour.json"}, r"tool 'echo': \$ref: .*nothing is fetched"),
        (
            {"pattern": "^(?!admin)"},
            r"tool 'echo': #/properties/colour/pattern: .* lookaround or a backreference",
        ),
    ],
    ids=["unknown-type", "ref-to-nothing", "ref-to-a-url", "lookaround"],
)
def test_an_invalid_json_schema_is_refused_whether_applied_or_read_back(
    context: object, property_schema: dict[str, Any], says: str
) -> None:
    """A stored row edited by hand is refused too: read back, a schema is compiled as it is
    when applied."""
    schema = {"type": "object", "properties": {"colour": property_schema}}
    with pytest.raises(ValidationError, match=says) as caught:
        CompanyDefinition.model_validate(
            company(tools=[tool(input_schema=schema)]), context=context
        )
    assert locations(caught.value) == [("tools", 0, "input_schema")]


def test_a_resource_uri_needs_a_scheme() -> None:
    """A resource URI is absolute, so clients can tell one company's resources apart."""
    with pytest.raises(ValidationError) as caught:
        ResourceDefinition.model_validate({"uri": "catalog", "name": "c", "text": "x"})
    assert locations(caught.value) == [("uri",)]


@pytest.mark.parametrize("body", [{"text": "hello"}, {"blob_base64": "AA=="}])
def test_a_resource_with_one_body_is_accepted(body: dict[str, str]) -> None:
    """Text alone or a blob alone is a resource body."""
    resource = ResourceDefinition.model_validate({"uri": "acme://r", "name": "r", **body})
    assert (resource.text, resource.blob_base64) in {("hello", None), (None, "AA==")}


@pytest.mark.parametrize(
    ("template", "variables"),
    [("acme://{a}/{+b}", ["a", "b"]), ("acme://x{?c}", ["c"]), ("acme://{#a}{/b}", ["a", "b"])],
)
def test_completions_may_name_variables_of_any_rfc6570_operator(
    template: str, variables: list[str]
) -> None:
    """A variable behind an RFC 6570 operator ({+b}, {?c}, {/b}) counts as declared."""
    definition = ResourceTemplateDefinition.model_validate(
        {"uri_template": template, "name": "t", "completions": {v: ["x"] for v in variables}}
    )
    assert set(definition.completions) == set(variables)


def test_prompt_messages_may_use_declared_arguments() -> None:
    """A placeholder naming a declared argument is accepted."""
    prompt = PromptDefinition.model_validate(
        {
            "name": "greet",
            "arguments": [{"name": "who"}],
            "messages": [{"role": "user", "text": "Say hello to {who}."}],
        }
    )
    assert [argument.name for argument in prompt.arguments] == ["who"]


def test_a_prompt_needs_messages_or_a_provider() -> None:
    """A prompt with neither messages nor a provider would answer prompts/get with nothing."""
    with pytest.raises(ValidationError, match="either messages or a provider"):
        PromptDefinition.model_validate({"name": "empty", "messages": []})


@pytest.mark.parametrize(
    ("field", "entries", "location"),
    [
        ("tools", [tool("echo"), tool("add"), tool("echo")], ("tools", 2, "name")),
        (
            "resources",
            [{"uri": "acme://r", "name": n, "text": "t"} for n in ("one", "two")],
            ("resources", 1, "uri"),
        ),
        (
            "resource_templates",
            [{"uri_template": "acme://{id}", "name": n} for n in ("one", "two")],
            ("resource_templates", 1, "uri_template"),
        ),
        (
            "prompts",
            [{"name": "p", "messages": [{"role": "user", "text": "hi"}]}] * 2,
            ("prompts", 1, "name"),
        ),
    ],
)
def test_a_repeated_name_is_reported_at_the_repeat(
    field: str, entries: list[dict[str, Any]], location: tuple[int | str, ...]
) -> None:
    """A second tool, resource, template or prompt under a taken name is pointed at itself."""
    with pytest.raises(ValidationError) as caught:
        CompanyDefinition.model_validate(company(**{field: entries}))
    assert locations(caught.value) == [location]
    assert "share the" in caught.value.errors()[0]["msg"]


def test_a_repeated_value_with_braces_is_quoted_verbatim() -> None:
    """A repeated URI template's own braces survive into the message unchanged."""
    template = {"uri_template": "acme://{key}/{value}", "name": "t"}
    with pytest.raises(ValidationError) as caught:
        CompanyDefinition.model_validate(company(resource_templates=[template, template]))
    assert "'acme://{key}/{value}'" in caught.value.errors()[0]["msg"]
