"""``resources/*``, ``prompts/*`` and ``completion/complete`` (MCP server features)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import mcp.types
import pytest

from frontdesk.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND
from tests.support.jsonrpc import call, error_of

TEMPLATE = "acme://anvils/{model}"


async def complete(
    client: httpx.AsyncClient, ref: dict[str, Any], name: str, value: str
) -> dict[str, Any]:
    result = await call(
        client, "completion/complete", {"ref": ref, "argument": {"name": name, "value": value}}
    )
    mcp.types.CompleteResult.model_validate(result)
    completion: dict[str, Any] = result["completion"]
    return completion


# --- resources ---------------------------------------------------------------------------


async def test_resources_list_names_each_resource(client: httpx.AsyncClient) -> None:
    """The listing is a valid MCP ListResourcesResult with the declared fields only."""
    result = await call(client, "resources/list")
    mcp.types.ListResourcesResult.model_validate(result)
    assert result == {
        "resources": [
            {
                "uri": "acme://catalog",
                "name": "catalog",
                "title": "Anvil catalog",
                "mimeType": "text/markdown",
            },
            {"uri": "acme://logo.png", "name": "logo", "mimeType": "image/png"},
        ]
    }


async def test_resources_list_at_a_company_without_resources_is_empty(
    client: httpx.AsyncClient,
) -> None:
    """A company that publishes nothing lists nothing."""
    assert await call(client, "resources/list", path="/v1/globex/mcp") == {"resources": []}


async def test_resource_templates_list_names_each_template(client: httpx.AsyncClient) -> None:
    """The template listing is valid MCP and leaves the completion suggestions out."""
    result = await call(client, "resources/templates/list")
    mcp.types.ListResourceTemplatesResult.model_validate(result)
    assert result == {"resourceTemplates": [{"uriTemplate": TEMPLATE, "name": "anvil"}]}


async def test_reading_a_text_resource_returns_its_text(client: httpx.AsyncClient) -> None:
    """resources/read of a text resource answers its text with its URI and MIME type."""
    result = await call(client, "resources/read", {"uri": "acme://catalog"})
    mcp.types.ReadResourceResult.model_validate(result)
    assert result == {
        "contents": [
            {"uri": "acme://catalog", "mimeType": "text/markdown", "text": "# Anvils\nHeavy ones."}
        ]
    }


async def test_reading_a_binary_resource_returns_its_blob(client: httpx.AsyncClient) -> None:
    """resources/read of a binary resource answers base64 in blob, and no text."""
    result = await call(client, "resources/read", {"uri": "acme://logo.png"})
    mcp.types.ReadResourceResult.model_validate(result)
    assert result == {
        "contents": [{"uri": "acme://logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}]
    }


async def test_reading_an_unknown_resource_is_resource_not_found(
    client: httpx.AsyncClient,
) -> None:
    """An unknown URI is -32002 (MCP's resource-not-found), naming the URI in data."""
    error = await error_of(client, "resources/read", {"uri": "acme://nope"})
    assert error["code"] == RESOURCE_NOT_FOUND
    assert error["data"] == {"uri": "acme://nope"}


async def test_reading_a_template_uri_is_resource_not_found(client: httpx.AsyncClient) -> None:
    """Templates are for discovery and completion; only declared resources can be read."""
    error = await error_of(client, "resources/read", {"uri": "acme://anvils/A-100"})
    assert error["code"] == RESOURCE_NOT_FOUND


async def test_another_companys_resource_cannot_be_read(client: httpx.AsyncClient) -> None:
    """acme's resources are unknown at globex."""
    error = await error_of(
        client, "resources/read", {"uri": "acme://catalog"}, path="/v1/globex/mcp"
    )
    assert error["code"] == RESOURCE_NOT_FOUND


async def test_reading_a_uri_over_8_kb_is_invalid_params(client: httpx.AsyncClient) -> None:
    """A 64 KB URI is refused before any template is tried against it."""
    uri = "acme://anvils/" + "/" * 65536
    started = time.perf_counter()
    error = await error_of(client, "resources/read", {"uri": uri})
    assert error["code"] == INVALID_PARAMS
    assert "8192" in error["message"]
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize("params", [{}, {"uri": 5}, {"uri": None}])
async def test_reading_without_a_string_uri_is_invalid_params(
    client: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    """resources/read needs a string uri: -32602 otherwise."""
    assert (await error_of(client, "resources/read", params))["code"] == INVALID_PARAMS


# --- prompts -----------------------------------------------------------------------------


async def test_prompts_list_names_each_prompt_and_its_arguments(
    client: httpx.AsyncClient,
) -> None:
    """The listing is valid MCP; arguments carry name and required, never completions."""
    result = await call(client, "prompts/list")
    mcp.types.ListPromptsResult.model_validate(result)
    [prompt] = result["prompts"]
    assert prompt["name"] == "greet"
    assert prompt["title"] == "Greeting"
    assert prompt["description"] == "Greets someone."
    assert [(a["name"], a.get("required", False)) for a in prompt["arguments"]] == [
        ("who", True),
        ("mood", False),
    ]
    assert all("completions" not in argument for argument in prompt["arguments"])


async def test_prompts_get_fills_in_the_arguments(client: httpx.AsyncClient) -> None:
    """prompts/get substitutes every {argument} into the messages."""
    result = await call(
        client, "prompts/get", {"name": "greet", "arguments": {"who": "Wile", "mood": "sunny"}}
    )
    mcp.types.GetPromptResult.model_validate(result)
    assert result == {
        "description": "Greets someone.",
        "messages": [
            {
                "role": "user",
                "content": {"type": "text", "text": "Say hello to Wile. Mood: sunny."},
            }
        ],
    }


async def test_prompts_get_leaves_no_placeholder_for_an_omitted_optional_argument(
    client: httpx.AsyncClient,
) -> None:
    """An optional argument left out is filled with nothing, not left as {mood}."""
    result = await call(client, "prompts/get", {"name": "greet", "arguments": {"who": "Wilma"}})
    text = result["messages"][0]["content"]["text"]
    assert text.startswith("Say hello to Wilma.")
    assert "{" not in text


async def test_prompts_get_does_not_expand_placeholders_inside_values(
    client: httpx.AsyncClient,
) -> None:
    """A value that itself looks like a placeholder is inserted literally."""
    result = await call(
        client, "prompts/get", {"name": "greet", "arguments": {"who": "{mood}", "mood": "x"}}
    )
    assert result["messages"][0]["content"]["text"] == "Say hello to {mood}. Mood: x."


@pytest.mark.parametrize(
    "params",
    [
        {"name": "greet"},
        {"name": "greet", "arguments": {}},
        {"name": "greet", "arguments": {"mood": "sunny"}},
    ],
    ids=["no-arguments", "empty-arguments", "only-optional"],
)
async def test_prompts_get_without_a_required_argument_is_invalid_params(
    client: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    """A missing required argument is -32602."""
    assert (await error_of(client, "prompts/get", params))["code"] == INVALID_PARAMS


@pytest.mark.parametrize(
    "params",
    [
        {"name": "nope"},
        {"name": "nope", "arguments": {"who": "x"}},
        {},
        {"name": 3},
        {"name": "greet", "arguments": {"who": 5}},
        {"name": "greet", "arguments": ["Wile"]},
    ],
    ids=["unknown", "unknown-with-args", "no-name", "name-number", "value-number", "args-array"],
)
async def test_prompts_get_of_an_unknown_or_malformed_request_is_invalid_params(
    client: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    """An unknown prompt, or a name or arguments of the wrong type, is -32602."""
    assert (await error_of(client, "prompts/get", params))["code"] == INVALID_PARAMS


# --- completion/complete -----------------------------------------------------------------


@pytest.mark.parametrize("typed", ["wi", "WI", "Wi", "wI"])
async def test_completing_a_prompt_argument_filters_by_prefix_ignoring_case(
    client: httpx.AsyncClient, typed: str
) -> None:
    """ref/prompt: the declared suggestions starting with what was typed, in any case."""
    completion = await complete(client, {"type": "ref/prompt", "name": "greet"}, "who", typed)
    assert completion == {"values": ["Wile", "Wilma"], "total": 2, "hasMore": False}


async def test_completing_with_nothing_typed_offers_every_suggestion(
    client: httpx.AsyncClient,
) -> None:
    """An empty value matches every suggestion, in declared order."""
    completion = await complete(client, {"type": "ref/prompt", "name": "greet"}, "who", "")
    assert completion["values"] == ["Wile", "Road Runner", "Wilma"]


async def test_completing_a_prefix_that_matches_nothing_offers_nothing(
    client: httpx.AsyncClient,
) -> None:
    """No suggestion starts with the value: an empty list, total 0."""
    completion = await complete(client, {"type": "ref/prompt", "name": "greet"}, "who", "zz")
    assert completion == {"values": [], "total": 0, "hasMore": False}


async def test_completing_an_argument_without_suggestions_offers_nothing(
    client: httpx.AsyncClient,
) -> None:
    """mood declares no suggestions."""
    completion = await complete(client, {"type": "ref/prompt", "name": "greet"}, "mood", "")
    assert completion["values"] == []


@pytest.mark.parametrize(
    ("typed", "expected"), [("a", ["A-100", "A-200"]), ("b-3", ["B-300"]), ("-", [])]
)
async def test_completing_a_resource_template_variable_filters_by_prefix(
    client: httpx.AsyncClient, typed: str, expected: list[str]
) -> None:
    """ref/resource: suggestions for the template variable, prefix-matched ignoring case."""
    completion = await complete(client, {"type": "ref/resource", "uri": TEMPLATE}, "model", typed)
    assert completion["values"] == expected
    assert completion["total"] == len(expected)


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt", "name": "nope"},
        {"type": "ref/resource", "uri": "acme://nope/{x}"},
        {"type": "ref/tool", "name": "echo"},
        {"name": "greet"},
        {"type": "ref/prompt"},
        {"type": "ref/resource"},
    ],
    ids=["unknown-prompt", "unknown-template", "unknown-type", "no-type", "no-name", "no-uri"],
)
async def test_completing_an_unknown_reference_is_invalid_params(
    client: httpx.AsyncClient, ref: dict[str, Any]
) -> None:
    """A reference to nothing this company declares is -32602."""
    error = await error_of(
        client, "completion/complete", {"ref": ref, "argument": {"name": "who", "value": ""}}
    )
    assert error["code"] == INVALID_PARAMS


@pytest.mark.parametrize(
    "argument",
    [None, {"value": "w"}, {"name": "who"}, {"name": "who", "value": 1}, "who"],
    ids=["missing", "no-name", "no-value", "value-number", "not-object"],
)
async def test_completing_without_a_proper_argument_is_invalid_params(
    client: httpx.AsyncClient, argument: object
) -> None:
    """completion/complete needs argument.name and argument.value as strings."""
    params: dict[str, Any] = {"ref": {"type": "ref/prompt", "name": "greet"}}
    if argument is not None:
        params["argument"] = argument
    assert (await error_of(client, "completion/complete", params))["code"] == INVALID_PARAMS
