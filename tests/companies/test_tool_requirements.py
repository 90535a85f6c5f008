"""What a tool asks of MCP 2026-07-28 clients, checked when a company is applied: the client
capabilities it needs, and the Mcp-Param headers its input schema declares."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from frontdesk.companies.definition import FROM_STORE, ClientCapability, ToolDefinition
from frontdesk.companies.files import parse_companies
from frontdesk.errors import ConfigurationError
from tests.support.tool_annotations import read_only

ECHO = {"type": "python", "target": "tests.fixtures.tools:echo"}


def tool(name: str = "lookup", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Looks an order up.",
        "annotations": read_only("Look an order up"),
        "provider": ECHO,
        **fields,
    }


def headed(**property_schema: Any) -> dict[str, Any]:
    """An input schema whose one property carries ``property_schema``."""
    return {"type": "object", "properties": {"order": property_schema}}


def test_a_tool_names_the_client_capabilities_it_needs() -> None:
    """Elicitation, sampling or roots; none by default."""
    assert ToolDefinition.model_validate(tool()).required_client_capabilities == []
    definition = ToolDefinition.model_validate(
        tool(required_client_capabilities=["elicitation", "sampling"])
    )
    assert definition.required_client_capabilities == [
        ClientCapability.ELICITATION,
        ClientCapability.SAMPLING,
    ]


@pytest.mark.parametrize(
    "capabilities", [["telepathy"], ["roots", "roots"]], ids=["unknown", "repeated"]
)
def test_an_unknown_or_repeated_capability_is_refused(capabilities: list[str]) -> None:
    """Only the capabilities a tool can ask with, each once."""
    with pytest.raises(ValidationError) as caught:
        ToolDefinition.model_validate(tool(required_client_capabilities=capabilities))
    assert caught.value.errors()[0]["loc"][0] == "required_client_capabilities"


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        pytest.param(
            headed(type="number", **{"x-mcp-header": "Order"}),
            "property 'order': x-mcp-header needs type string, integer or boolean",
            id="number",
        ),
        pytest.param(
            headed(type="string", **{"x-mcp-header": "Order Id"}),
            "property 'order': x-mcp-header must be an HTTP field-name token",
            id="not-a-token",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "order": {"type": "string", "x-mcp-header": "Key"},
                    "shop": {"type": "string", "x-mcp-header": "key"},
                },
            },
            "repeats the header of property",
            id="repeated",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "lines": {
                        "type": "array",
                        "items": {"type": "string", "x-mcp-header": "Line"},
                    }
                },
            },
            "schema at '/properties/lines/items': x-mcp-header may only mark a property",
            id="under-items",
        ),
    ],
)
def test_applying_refuses_a_header_declaration_the_revision_forbids(
    schema: dict[str, Any], reason: str
) -> None:
    """`companies apply` names the file path, the tool and the property, and why."""
    document = {
        "companies": [{"tenant_key": "acme", "name": "Acme", "tools": [tool(input_schema=schema)]}]
    }
    with pytest.raises(ConfigurationError) as caught:
        parse_companies(document)
    message = str(caught.value)
    assert message.startswith(
        "companies[0].tools[0].input_schema: tool 'lookup' cannot be served with its"
        " Mcp-Param headers: "
    ), message
    assert reason in message


def test_a_stored_company_with_such_a_declaration_still_loads() -> None:
    """Read back from the store, a tool applied before the check is served, unchecked."""
    schema = headed(type="number", **{"x-mcp-header": "Order"})
    definition = ToolDefinition.model_validate(tool(input_schema=schema), context=FROM_STORE)
    assert definition.input_schema == schema


def test_allowed_declarations_are_applied() -> None:
    """String, integer and boolean properties reached through properties alone."""
    schema = headed(type="integer", **{"x-mcp-header": "Order"})
    assert ToolDefinition.model_validate(tool(input_schema=schema)).input_schema == schema
