"""Mcp-Param-* headers (MCP 2026-07-28, "Custom Headers from Tool Parameters"): the arguments
a tool marks with ``x-mcp-header`` must be repeated in headers that say what the body says,
or the call is refused with HeaderMismatch (-32020) in a 400."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from frontdesk.companies.header_declarations import InvalidDeclaration, declarations, declared
from frontdesk.config import Settings
from frontdesk.protocol.errors import HEADER_MISMATCH
from tests.conftest import BASE_URL, start_app
from tests.support.jsonrpc import assert_envelope, request

COMPANIES = Path(__file__).with_name("param_headers.yaml")
ROUTED = "/v1/routed/mcp"
MODERN = "2026-07-28"
ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ARGUMENTS: dict[str, Any] = {
    "region": "us-west1",
    "priority": 42,
    "dry_run": True,
    "target": {"zone": "b"},
    "query": "SELECT 1",
}
HEADERS = {
    "mcp-param-region": "us-west1",
    "mcp-param-priority": "42",
    "mcp-param-dry-run": "true",
    "mcp-param-zone": "b",
}

Json = dict[str, Any]


def wrapped(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.fixture
async def client(make_settings: Callable[..., Settings]) -> AsyncIterator[httpx.AsyncClient]:
    """The app serving only the routed company."""
    app = await start_app(make_settings(), companies=COMPANIES)
    try:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client
    finally:
        await app.services.stop()


def call_message(arguments: Json, tool: str = "run_query", request_id: int = 7) -> Json:
    params = {"name": tool, "arguments": arguments, "_meta": ENVELOPE}
    return request("tools/call", params, request_id)


async def call(
    client: httpx.AsyncClient, arguments: Json, params: dict[str, str], tool: str = "run_query"
) -> httpx.Response:
    """A 2026-07-28 tools/call with its routing headers and these Mcp-Param-* headers."""
    headers = {
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
        **params,
    }
    return await client.post(ROUTED, json=call_message(arguments, tool), headers=headers)


def assert_called(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert response.json()["result"]["resultType"] == "complete"


async def test_the_listing_keeps_the_declarations(client: httpx.AsyncClient) -> None:
    """Clients learn which headers to send from the tool's inputSchema, kept as written."""
    message = request("tools/list", {"_meta": ENVELOPE})
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    response = await client.post(ROUTED, json=message, headers=headers)
    [tool] = [tool for tool in response.json()["result"]["tools"] if tool["name"] == "run_query"]
    assert tool["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"


async def test_headers_that_repeat_the_arguments_are_accepted(client: httpx.AsyncClient) -> None:
    """String, integer, boolean and nested arguments, each repeated in its header."""
    assert_called(await call(client, ARGUMENTS, HEADERS))


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("mcp-param-region", wrapped("us-west1")),
        ("mcp-param-region", "  us-west1\t"),
        ("MCP-PARAM-REGION", "us-west1"),
        ("mcp-param-priority", "42.0"),
        ("mcp-param-priority", wrapped("42")),
    ],
)
async def test_a_header_is_read_as_the_revision_says(
    client: httpx.AsyncClient, header: str, value: str
) -> None:
    """Base64-wrapped, with whitespace around it, named in any case, or an integer with a
    zero fraction (compared as a number, as the revision advises): still a match."""
    headers = {name: text for name, text in HEADERS.items() if name != header.lower()}
    assert_called(await call(client, ARGUMENTS, {**headers, header: value}))


async def test_a_value_that_is_not_plain_ascii_travels_wrapped(
    client: httpx.AsyncClient,
) -> None:
    """Non-ASCII and edge whitespace are sent base64-wrapped, and match once decoded."""
    arguments = {"region": " Zürich "}
    assert_called(await call(client, arguments, {"mcp-param-region": wrapped(" Zürich ")}))


async def test_a_literal_that_only_looks_wrapped_is_compared_as_it_is(
    client: httpx.AsyncClient,
) -> None:
    """Without both markers a value is literal: the body holds the same text."""
    for literal in ("SGVsbG8=", "=?base64?SGVsbG8=", "SGVsbG8=?="):
        assert_called(await call(client, {"region": literal}, {"mcp-param-region": literal}))


async def test_arguments_that_are_absent_or_null_need_no_header(
    client: httpx.AsyncClient,
) -> None:
    """The revision: no value, no header; the server must not expect one."""
    assert_called(await call(client, {"query": "SELECT 1"}, {}))
    assert_called(await call(client, {"region": None, "target": {}}, {}))


@pytest.mark.parametrize(
    "changed",
    [
        {"mcp-param-region": "eu-west1"},
        {"mcp-param-region": "US-WEST1"},
        {"mcp-param-priority": "43"},
        {"mcp-param-priority": "42.5"},
        {"mcp-param-priority": "4.2e1"},
        {"mcp-param-dry-run": "True"},
        {"mcp-param-dry-run": "1"},
        {"mcp-param-zone": "a"},
        {"mcp-param-region": "=?base64?dXMtd2VzdDE?="},
        {"mcp-param-region": "=?base64?dXMt!!d2VzdDE=?="},
        {"mcp-param-region": "=?base64?dXMtd2VzdDF=?="},
    ],
)
async def test_a_header_that_disagrees_with_the_body_is_header_mismatch(
    client: httpx.AsyncClient, changed: dict[str, str]
) -> None:
    """Another value, another case, another number or boolean spelling, or base64 that is
    malformed (padding, alphabet) or not canonical: -32020 in a 400 with the request's id."""
    envelope = assert_envelope(await call(client, ARGUMENTS, {**HEADERS, **changed}), 400)
    assert envelope["error"]["code"] == HEADER_MISMATCH
    assert envelope["id"] == 7


@pytest.mark.parametrize("missing", sorted(HEADERS))
async def test_a_header_left_out_while_its_argument_is_set_is_header_mismatch(
    client: httpx.AsyncClient, missing: str
) -> None:
    """The revision: a client that omits the header of a value in the body is refused."""
    headers = {name: value for name, value in HEADERS.items() if name != missing}
    assert_envelope(await call(client, ARGUMENTS, headers), 400, HEADER_MISMATCH)


async def test_a_header_for_an_absent_or_null_argument_is_header_mismatch(
    client: httpx.AsyncClient,
) -> None:
    """An intermediary could route on a value the tool never receives: refused."""
    for arguments in ({"query": "SELECT 1"}, {"region": None}):
        response = await call(client, arguments, {"mcp-param-region": "us-west1"})
        assert_envelope(response, 400, HEADER_MISMATCH)


async def test_a_header_sent_twice_is_header_mismatch(client: httpx.AsyncClient) -> None:
    """Two copies could route two ways, whatever the body says."""
    raw = [
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"run_query"),
        (b"mcp-param-region", b"us-west1"),
        (b"mcp-param-region", b"us-west1"),
    ]
    message = call_message({"region": "us-west1"})
    response = await client.post(ROUTED, content=orjson.dumps(message), headers=raw)
    assert_envelope(response, 400, HEADER_MISMATCH)


async def test_headers_no_tool_declares_are_ignored(client: httpx.AsyncClient) -> None:
    """An Mcp-Param-* header the called tool does not declare is not this server's to check."""
    response = await call(client, {"region": "x"}, {"mcp-param-region": "y"}, tool="plain")
    assert_called(response)


async def test_every_batch_member_is_held_to_the_headers(client: httpx.AsyncClient) -> None:
    """A batch (interface 2.9) repeats one call's headers: members whose arguments they describe
    run; a member they do not describe, or headers left out, refuse the whole batch with
    -32020 and that member's id, before any member runs."""
    same = [call_message({"region": "us-west1"}, request_id=1)]
    same.append(call_message({"region": "us-west1", "query": "SELECT 2"}, request_id=2))
    headers = {
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "run_query",
        "mcp-param-region": "us-west1",
    }
    first, second = (await client.post(ROUTED, json=same, headers=headers)).json()
    assert first["result"]["resultType"] == "complete"
    assert second["result"]["resultType"] == "complete"
    differing = [same[0], call_message({"region": "eu-west1"}, request_id=2)]
    response = await client.post(ROUTED, json=differing, headers=headers)
    assert assert_envelope(response, 400, HEADER_MISMATCH)["id"] == 2
    del headers["mcp-param-region"]
    response = await client.post(ROUTED, json=same, headers=headers)
    assert assert_envelope(response, 400, HEADER_MISMATCH)["id"] == 1


async def test_the_2025_revisions_ignore_the_headers(client: httpx.AsyncClient) -> None:
    """Mcp-Param-* belongs to 2026-07-28: a 2025 call is served exactly as before."""
    message = request("tools/call", {"name": "run_query", "arguments": {"region": "us-west1"}})
    headers = {"mcp-protocol-version": "2025-11-25", "mcp-param-region": "elsewhere"}
    response = await client.post(ROUTED, json=message, headers=headers)
    assert response.status_code == 200, response.text
    assert "result" in response.json()


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"properties": {"n": {"type": "number", "x-mcp-header": "N"}}}, "needs type"),
        ({"properties": {"n": {"type": "string", "x-mcp-header": "N n"}}}, "token"),
        ({"properties": {"n": {"type": "string", "x-mcp-header": ""}}}, "token"),
        (
            {
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Same"},
                    "b": {"type": "string", "x-mcp-header": "same"},
                }
            },
            "repeats",
        ),
        (
            {"items": {"properties": {"n": {"type": "string", "x-mcp-header": "N"}}}},
            "reached through 'properties' alone",
        ),
        (
            {"$defs": {"n": {"type": "string", "x-mcp-header": "N"}}},
            "reached through 'properties' alone",
        ),
        ({"type": "object", "x-mcp-header": "Root"}, "reached through 'properties' alone"),
    ],
)
def test_a_declaration_the_revision_forbids_is_named_and_checks_nothing(
    schema: dict[str, Any], reason: str
) -> None:
    """A number, a name that is no field-name token, a name used twice (in any case), or a
    property not reached through ``properties`` alone: refused with the reason, and such a
    tool has no header to check (clients must drop it)."""
    with pytest.raises(InvalidDeclaration, match=reason):
        declarations(schema)
    assert declared(schema) == ()
