"""The conformance company's tools, resources and prompts, served by the ``python`` provider.

Names, URIs and contents are the ones the MCP conformance suite (npm
``@modelcontextprotocol/conformance``) asks a server under test to implement. The tools that
would need a server-to-client message (log and progress notifications, sampling,
elicitation) answer what a JSON-only endpoint can: the work without the notifications, or
an error saying the request cannot be made.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from frontdesk.tools.content import PromptCall, ResourceCall
from frontdesk.tools.provider import ContentBlock, ToolCall, ToolError, ToolResult

# A 1x1 red PNG and a minimal WAV, the suite's own sample data.
IMAGE_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0g"
    "AAAABJRU5ErkJggg=="
)
AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

IMAGE: ContentBlock = {"type": "image", "data": IMAGE_BASE64, "mimeType": "image/png"}

NO_SERVER_REQUESTS = (
    "This endpoint answers with JSON only and never sends requests to the client,"
    " so it cannot ask for {what}."
)


async def simple_text(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    return "This is a simple text response for testing."


async def image_content(_arguments: Mapping[str, Any], _call: ToolCall) -> ToolResult:
    return ToolResult(content=[IMAGE])


async def audio_content(_arguments: Mapping[str, Any], _call: ToolCall) -> ToolResult:
    return ToolResult(content=[{"type": "audio", "data": AUDIO_BASE64, "mimeType": "audio/wav"}])


async def embedded_resource(_arguments: Mapping[str, Any], _call: ToolCall) -> ToolResult:
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return ToolResult(content=[{"type": "resource", "resource": resource}])


async def multiple_content_types(_arguments: Mapping[str, Any], _call: ToolCall) -> ToolResult:
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": json.dumps({"test": "data", "value": 123}),
    }
    return ToolResult(
        content=[
            {"type": "text", "text": "Multiple content types test:"},
            IMAGE,
            {"type": "resource", "resource": resource},
        ]
    )


async def tool_with_logging(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    # The suite also expects three notifications/message during the call; none can be sent.
    return "Tool with logging executed successfully"


async def tool_with_progress(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    # The suite also expects notifications/progress during the call; none can be sent.
    return "Tool with progress executed successfully"


async def error_handling(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    raise ToolError("This tool intentionally returns an error for testing")


async def sampling(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    raise ToolError(NO_SERVER_REQUESTS.format(what="sampling"))


async def elicitation(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    raise ToolError(NO_SERVER_REQUESTS.format(what="user input (elicitation)"))


async def reconnection(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    # Over SSE this tool closes the stream mid-call; a JSON reply has no stream to close.
    return "Reconnection test completed successfully."


async def json_schema_2020_12(arguments: Mapping[str, Any], _call: ToolCall) -> str:
    return f"JSON Schema 2020-12 tool called with: {json.dumps(dict(arguments))}"


async def static_text(_uri: str, _call: ResourceCall) -> str:
    return "This is the content of the static text resource."


async def static_binary(_uri: str, _call: ResourceCall) -> bytes:
    return base64.b64decode(IMAGE_BASE64)


async def watched_resource(_uri: str, _call: ResourceCall) -> str:
    return "Watched resource content."


async def template_data(_uri: str, call: ResourceCall) -> str:
    identifier = call.variables["id"]
    return json.dumps(
        {"id": identifier, "templateTest": True, "data": f"Data for ID: {identifier}"}
    )


async def simple_prompt(_arguments: Mapping[str, str], _call: PromptCall) -> str:
    return "This is a simple prompt for testing."


async def prompt_with_arguments(arguments: Mapping[str, str], _call: PromptCall) -> str:
    return f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"


async def prompt_with_embedded_resource(
    arguments: Mapping[str, str], _call: PromptCall
) -> list[dict[str, Any]]:
    resource = {
        "uri": arguments["resourceUri"],
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        {
            "role": "user",
            "content": {"type": "text", "text": "Please process the embedded resource above."},
        },
    ]


async def prompt_with_image(
    _arguments: Mapping[str, str], _call: PromptCall
) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": IMAGE},
        {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
    ]


async def streaming_elicitation(_arguments: Mapping[str, Any], _call: ToolCall) -> str:
    # Over SSE this tool would ask mid-call; a JSON reply carries its answer and nothing else.
    return "Streaming elicitation test completed: no request was sent to the client."


async def region_header(arguments: Mapping[str, Any], _call: ToolCall) -> str:
    return f"Query run in region {arguments['region']}."
