"""Resources and prompts answered by python providers, and the shapes they may return.

A resource reader is ``async def read(uri, call) -> str | bytes | dict | list[dict]``:
text, bytes (sent base64), one MCP contents object, or several. A prompt builder is
``async def build(arguments, call) -> str | list[dict] | dict | InputRequired``: one user
message, a list of MCP prompt messages, a whole result with ``messages`` (and
``description``), or, as a tool may, the questions it needs the customer's client to answer
first (MCP 2026-07-28; ``call.input_responses`` and ``call.state`` on the request made again).
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from frontdesk.domain import Customer
from frontdesk.tools.python import resolve_coroutine_function


@dataclass(frozen=True, slots=True)
class ResourceCall:
    tenant_key: str
    uri: str
    # Values of the template's variables when the URI matched a template.
    variables: Mapping[str, str]
    customer: Customer | None
    request_id: str


@dataclass(frozen=True, slots=True)
class PromptCall:
    tenant_key: str
    prompt: str
    customer: Customer | None
    request_id: str
    # As in a ``ToolCall``: what the client can be asked (nothing for a 2025 client), and on
    # the request made again after an ``InputRequired`` answer, the client's answers and the
    # builder's own state as it left it.
    input_methods: frozenset[str] = frozenset()
    input_responses: Mapping[str, Any] | None = None
    state: str | None = None


class ContentError(Exception):
    """A provider's answer is not a shape this module can turn into MCP."""


ResourceReader = Callable[[str, ResourceCall], Awaitable[object]]
PromptBuilder = Callable[[Mapping[str, str], PromptCall], Awaitable[object]]


def resource_reader(target: str) -> ResourceReader:
    return resolve_coroutine_function(target)


def prompt_builder(target: str) -> PromptBuilder:
    return resolve_coroutine_function(target)


def resource_contents(uri: str, mime_type: str | None, output: object) -> list[dict[str, Any]]:
    """A reader's output as MCP ``contents``."""
    if isinstance(output, str):
        return [_drop_none({"uri": uri, "mimeType": mime_type, "text": output})]
    if isinstance(output, bytes):
        blob = base64.b64encode(output).decode("ascii")
        return [_drop_none({"uri": uri, "mimeType": mime_type, "blob": blob})]
    items = output if isinstance(output, list) else [output]
    contents = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("uri", uri), str):
            raise ContentError("resource contents must be objects with a uri")
        if not isinstance(item.get("text"), str) and not isinstance(item.get("blob"), str):
            raise ContentError("resource contents need text or blob")
        contents.append({"uri": uri, **item})
    return contents


def prompt_result(output: object, description: str | None) -> dict[str, Any]:
    """A builder's output as an MCP ``prompts/get`` result."""
    if isinstance(output, str):
        messages: object = [{"role": "user", "content": {"type": "text", "text": output}}]
    elif isinstance(output, dict):
        messages = output.get("messages")
        description = output.get("description", description)
    else:
        messages = output
    if not isinstance(messages, list) or not all(_is_message(item) for item in messages):
        raise ContentError("a prompt must be a list of messages with role and content")
    result: dict[str, Any] = {"messages": messages}
    if description:
        result["description"] = description
    return result


def _is_message(item: object) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") in ("user", "assistant")
        and isinstance(item.get("content"), dict)
        and isinstance(item["content"].get("type"), str)
    )


def _drop_none(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if value is not None}
