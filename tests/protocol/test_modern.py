"""MCP 2026-07-28 on ``/v1/{tenantKey}/mcp``: the per-request envelope and routing headers,
``server/discover``, the fields its results carry, its errors and their statuses, and the
contract (interface 4.2, 7.1, 8) holding for it as for 2025."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

import httpx
import orjson
import pytest
from mcp_types.methods import validate_server_result

import frontdesk
from frontdesk.companies.catalog import VERSION_META_KEY
from frontdesk.config import MAX_BODY_BYTES
from frontdesk.protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    NO_ACTIVE_COMPANY,
    RATE_LIMITED,
    SESSION_UNKNOWN,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from frontdesk.protocol.versions import SUPPORTED_VERSIONS
from tests.protocol.conftest import Serve
from tests.support.jsonrpc import ACME, assert_envelope, request

MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0"},
}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
LISTINGS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}

Json = dict[str, Any]


def modern(method: str, params: Mapping[str, Any] | None = None, request_id: object = 1) -> Json:
    """A 2026-07-28 request: its params carry the envelope in _meta."""
    return request(method, {**(params or {}), "_meta": ENVELOPE}, request_id)


def headers_for(message: Json, **overrides: str) -> dict[str, str]:
    """The headers a 2026-07-28 client sends with ``message``."""
    headers = {"mcp-protocol-version": MODERN, "mcp-method": message["method"]}
    field = NAMED.get(message["method"])
    if field is not None:
        headers["mcp-name"] = message["params"][field]
    headers.update(overrides)
    return headers


async def post(
    client: httpx.AsyncClient, message: Json, path: str = ACME, **headers: str
) -> httpx.Response:
    """POST one 2026-07-28 message with the headers that describe it (or ``headers``)."""
    return await client.post(path, json=message, headers=headers_for(message, **headers))


async def result_of(client: httpx.AsyncClient, message: Json, path: str = ACME) -> Json:
    """The result of a message answered with 200; it must validate against 2026-07-28."""
    response = await post(client, message, path)
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["id"] == message["id"]
    result: Json = reply["result"]
    validate_server_result(message["method"], MODERN, result)
    return result


def assert_served_by(result: Json, title: str = "Acme Corp") -> None:
    """resultType complete, and the server named in _meta (revision: on every result)."""
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == {
        "name": "frontdesk",
        "title": title,
        "version": frontdesk.__version__,
    }


# --- server/discover ----------------------------------------------------------------------


async def test_discover_names_every_version_the_capabilities_and_the_server(
    client: httpx.AsyncClient,
) -> None:
    """server/discover needs no initialize: versions, honest capabilities, cache hints."""
    result = await result_of(client, modern("server/discover"))
    assert result["supportedVersions"] == [*SUPPORTED_VERSIONS, MODERN]
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {"subscribe": False, "listChanged": False},
        "prompts": {"listChanged": False},
        "completions": {},
    }
    assert result["cacheScope"] == "public"
    assert 0 < result["ttlMs"] <= 5_000
    assert_served_by(result)


async def test_a_modern_reply_opens_no_session(client: httpx.AsyncClient) -> None:
    """No Mcp-Session-Id is issued: the revision has no handshake and no session."""
    response = await post(client, modern("server/discover"))
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers


async def test_client_info_is_optional(client: httpx.AsyncClient) -> None:
    """The envelope without clientInfo (a SHOULD) is served."""
    message = request(
        "server/discover",
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/logLevel": "info",
            }
        },
    )
    assert (await result_of(client, message))["resultType"] == "complete"


# --- listings and results -----------------------------------------------------------------


@pytest.mark.parametrize(("method", "key"), LISTINGS.items())
async def test_a_listing_is_the_2025_one_with_cache_hints_and_the_server(
    client: httpx.AsyncClient, method: str, key: str
) -> None:
    """The same items as 2025's listing (each tool naming its version too), public (one for
    every caller), fresh while cached."""
    legacy = (await client.post(ACME, json=request(method))).json()["result"]
    result = await result_of(client, modern(method))
    if method == "tools/list":
        for tool in result[key]:
            meta = tool.pop("_meta")
            assert set(meta) == {VERSION_META_KEY}
            assert re.fullmatch("[0-9a-f]{64}", meta[VERSION_META_KEY])
    assert result[key] == legacy[key]
    assert result["cacheScope"] == "public"
    assert type(result["ttlMs"]) is int
    assert_served_by(result)
    assert "resultType" not in legacy
    assert "ttlMs" not in legacy


async def test_ttl_is_what_is_left_of_this_instances_company_cache(serve: Serve) -> None:
    """ttlMs never exceeds FRONTDESK_COMPANY_CACHE_SECONDS, and is 0 with no cache."""
    cached = await serve(company_cache_seconds=60)
    ttl = (await result_of(cached, modern("tools/list")))["ttlMs"]
    assert 50_000 < ttl <= 60_000
    uncached = await serve(company_cache_seconds=0)
    assert (await result_of(uncached, modern("tools/list")))["ttlMs"] == 0


async def test_a_guest_tool_call_is_complete_and_names_the_server(
    client: httpx.AsyncClient,
) -> None:
    """tools/call answers as in 2025, plus resultType and serverInfo."""
    message = modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    result = await result_of(client, message)
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result["isError"] is False
    assert_served_by(result)


async def test_a_personal_tool_called_as_a_guest_is_401_with_both_challenges(
    client: httpx.AsyncClient,
) -> None:
    """interface 5.5 holds in 2026-07-28: 401, WWW-Authenticate and the challenge in _meta."""
    message = modern("tools/call", {"name": "whoami"})
    response = await post(client, message, "/v1/initech/mcp")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer resource_metadata=")
    reply = response.json()
    assert reply["id"] == 1
    result = reply["result"]
    assert result["isError"] is True
    assert result["_meta"]["mcp/www_authenticate"]
    assert_served_by(result, "Initech")


async def test_a_static_resource_is_shared_and_cached_like_the_listings(
    client: httpx.AsyncClient,
) -> None:
    """A resource written in the company's definition is public, with the listing's ttl."""
    result = await result_of(client, modern("resources/read", {"uri": "acme://catalog"}))
    assert result["contents"][0]["text"] == "# Anvils\nHeavy ones."
    assert result["cacheScope"] == "public"
    assert 0 < result["ttlMs"] <= 5_000
    assert_served_by(result)


async def test_prompts_and_completions_are_complete(client: httpx.AsyncClient) -> None:
    """prompts/get and completion/complete carry resultType and serverInfo."""
    prompt = await result_of(
        client, modern("prompts/get", {"name": "greet", "arguments": {"who": "Wile"}})
    )
    assert_served_by(prompt)
    completion = await result_of(
        client,
        modern(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "who", "value": "W"},
            },
        ),
    )
    assert completion["completion"]["values"] == ["Wile", "Wilma"]
    assert_served_by(completion)


# --- errors: codes, statuses and ids --------------------------------------------------------


async def test_an_unknown_resource_is_invalid_params_with_its_uri_and_400(
    client: httpx.AsyncClient,
) -> None:
    """2026-07-28 retired -32002: -32602 naming the URI, HTTP 400, the request's id."""
    message = modern("resources/read", {"uri": "acme://nope"}, request_id="r-7")
    envelope = assert_envelope(await post(client, message), 400, INVALID_PARAMS)
    assert envelope["id"] == "r-7"
    assert envelope["error"]["data"] == {"uri": "acme://nope"}


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "subscriptions/listen",
        "x/y",
    ],
)
async def test_a_method_not_of_this_revision_is_404_method_not_found(
    client: httpx.AsyncClient, method: str
) -> None:
    """Removed and unknown methods: -32601 in a 404, with the request's id."""
    envelope = assert_envelope(
        await post(client, modern(method, request_id=9)), 404, METHOD_NOT_FOUND
    )
    assert envelope["id"] == 9


async def test_an_unsupported_version_is_32022_with_the_id_and_the_versions(
    client: httpx.AsyncClient,
) -> None:
    """-32022 in a 400 with data.supported and data.requested, and the request's id."""
    message = modern("server/discover", request_id=301)
    message["params"]["_meta"] = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "v999"}
    response = await post(client, message, **{"mcp-protocol-version": "v999"})
    envelope = assert_envelope(response, 400, UNSUPPORTED_PROTOCOL_VERSION)
    assert envelope["id"] == 301
    assert envelope["error"]["data"] == {
        "supported": [*SUPPORTED_VERSIONS, MODERN],
        "requested": "v999",
    }


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {"io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": MODERN},
        {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": []},
        {**ENVELOPE, "io.modelcontextprotocol/logLevel": "loud"},
    ],
)
async def test_a_missing_or_malformed_envelope_is_invalid_params_with_400(
    client: httpx.AsyncClient, meta: Json | None
) -> None:
    """params._meta without its required keys, or with one of the wrong shape: -32602, 400."""
    message = request("tools/list", {} if meta is None else {"_meta": meta}, request_id=101)
    envelope = assert_envelope(await post(client, message), 400, INVALID_PARAMS)
    assert envelope["id"] == 101


@pytest.mark.parametrize(
    "headers",
    [
        {"mcp-method": "tools/list"},
        {"mcp-name": "add"},
        {"mcp-method": ""},
        {"mcp-name": "=?base64?not base64?="},
    ],
)
async def test_a_routing_header_that_disagrees_with_the_body_is_header_mismatch(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    """Mcp-Method and Mcp-Name must say what the body says: else -32020 in a 400."""
    message = modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, request_id=5)
    envelope = assert_envelope(await post(client, message, **headers), 400, HEADER_MISMATCH)
    assert envelope["id"] == 5


@pytest.mark.parametrize("missing", ["mcp-method", "mcp-name"])
async def test_a_missing_routing_header_is_header_mismatch(
    client: httpx.AsyncClient, missing: str
) -> None:
    """One request must name its method, and its tool, in the headers."""
    message = modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    headers = headers_for(message)
    del headers[missing]
    assert_envelope(await client.post(ACME, json=message, headers=headers), 400, HEADER_MISMATCH)


async def test_the_envelope_version_must_match_the_header(client: httpx.AsyncClient) -> None:
    """A body naming another version than its header: -32020, not an unsupported version."""
    message = modern("server/discover", request_id=302)
    message["params"]["_meta"] = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "v999"}
    envelope = assert_envelope(await post(client, message), 400, HEADER_MISMATCH)
    assert envelope["id"] == 302


async def test_a_repeated_routing_header_is_header_mismatch(client: httpx.AsyncClient) -> None:
    """Two Mcp-Method headers could route two ways: refused."""
    message = modern("tools/list")
    raw = [
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/list"),
        (b"mcp-method", b"tools/call"),
    ]
    response = await client.post(ACME, content=orjson.dumps(message), headers=raw)
    assert_envelope(response, 400, HEADER_MISMATCH)


async def test_a_name_header_in_base64_or_with_spaces_around_it_is_read(
    client: httpx.AsyncClient,
) -> None:
    """The revision's base64 wrapping (for values not plain ASCII) and RFC 9110's OWS."""
    message = modern("prompts/get", {"name": "greet", "arguments": {"who": "Zoë"}})
    wrapped = "=?base64?" + base64.b64encode(b"greet").decode() + "?="
    for name in (wrapped, "  greet\t"):
        response = await post(client, message, **{"mcp-name": name})
        assert response.status_code == 200, response.text


@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_a_body_claiming_2026_without_the_header_is_header_mismatch(
    client: httpx.AsyncClient, version: str | None
) -> None:
    """Only the header routes: a 2026 envelope under no header or a 2025 one is refused."""
    headers = {} if version is None else {"mcp-protocol-version": version}
    response = await client.post(ACME, json=modern("tools/list", request_id=3), headers=headers)
    envelope = assert_envelope(response, 400, HEADER_MISMATCH)
    assert envelope["id"] == 3


# --- the contract in this revision ----------------------------------------------------------


async def test_a_batch_is_served_member_by_member(client: httpx.AsyncClient) -> None:
    """interface 2.9 batches: the header names the revision, each member carries its envelope;
    a member at fault gets its own error, the others their results, in a 200."""
    echo = {"name": "echo", "arguments": {"text": "a"}}
    batch = [
        modern("tools/call", echo, request_id=1),
        request("tools/call", echo, request_id=2),
        modern("tools/call", echo, request_id=3),
    ]
    headers = headers_for(batch[0])
    response = await client.post(ACME, json=batch, headers=headers)
    assert response.status_code == 200
    first, second, third = response.json()
    assert first["result"]["content"] == [{"type": "text", "text": "a"}]
    assert second["error"]["code"] == INVALID_PARAMS
    assert third["result"]["content"] == [{"type": "text", "text": "a"}]


async def test_a_batch_without_routing_headers_is_refused_whole(
    client: httpx.AsyncClient,
) -> None:
    """Every request of this revision names its method (and what it calls) in the headers,
    so intermediaries can route and set policy on them: a batch that leaves them out is
    refused before any member runs, with the first member they do not describe."""
    call = modern("tools/call", {"name": "echo", "arguments": {"text": "a"}}, request_id=4)
    batch = [call, modern("tools/list", request_id=5)]
    for headers in (
        {"mcp-protocol-version": MODERN},
        {"mcp-protocol-version": MODERN, "mcp-method": "tools/call"},
    ):
        response = await client.post(ACME, json=batch, headers=headers)
        envelope = assert_envelope(response, 400, HEADER_MISMATCH)
        assert envelope["id"] == 4
        assert "missing" in envelope["error"]["message"]


async def test_a_batch_member_the_routing_headers_do_not_name_refuses_the_batch(
    client: httpx.AsyncClient,
) -> None:
    """One set of headers names one method and one name: a member of another method, or
    calling another tool, is refused with -32020 and its id, and nothing in the batch runs."""
    listings = [modern("tools/list", request_id=1), modern("prompts/list", request_id=2)]
    response = await client.post(ACME, json=listings, headers=headers_for(listings[0]))
    assert assert_envelope(response, 400, HEADER_MISMATCH)["id"] == 2
    calls = [
        modern("tools/call", {"name": "echo", "arguments": {"text": "a"}}, request_id=1),
        modern("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, request_id=3),
    ]
    response = await client.post(ACME, json=calls, headers=headers_for(calls[0]))
    assert assert_envelope(response, 400, HEADER_MISMATCH)["id"] == 3


async def test_notifications_in_a_batch_are_not_held_to_the_headers(
    client: httpx.AsyncClient,
) -> None:
    """A notification runs nothing, and the revision sets no headers for one."""
    listing = modern("tools/list", request_id=1)
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": ENVELOPE}}
    response = await client.post(ACME, json=[listing, note], headers=headers_for(listing))
    assert response.status_code == 200
    [reply] = response.json()
    assert reply["result"]["resultType"] == "complete"


async def test_only_notifications_are_accepted_with_202(client: httpx.AsyncClient) -> None:
    """A notification POST of this revision is acknowledged, as in 2025."""
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": ENVELOPE}}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "notifications/cancelled"}
    response = await client.post(ACME, json=note, headers=headers)
    assert response.status_code == 202
    assert response.content == b""


async def test_a_body_over_256_kb_is_413(client: httpx.AsyncClient) -> None:
    """The body limit holds whatever the revision."""
    message = modern("tools/list", {"pad": "x" * MAX_BODY_BYTES})
    assert_envelope(await post(client, message), 413)


async def test_the_rate_limit_answers_429_with_retry_after(client: httpx.AsyncClient) -> None:
    """strict allows 3 a minute: the fourth 2026-07-28 request is refused."""
    for _ in range(3):
        assert (await post(client, modern("tools/list"), "/v1/strict/mcp")).status_code == 200
    response = await post(client, modern("tools/list"), "/v1/strict/mcp")
    assert_envelope(response, 429, RATE_LIMITED)
    assert int(response.headers["retry-after"]) > 0


async def test_each_company_lists_only_its_own_tools(client: httpx.AsyncClient) -> None:
    """Tenant isolation: globex's listing is globex's; an unknown tenant is 404."""
    tools = (await result_of(client, modern("tools/list"), "/v1/globex/mcp"))["tools"]
    assert [tool["name"] for tool in tools] == ["echo"]
    response = await post(client, modern("tools/list"), "/v1/nobody/mcp")
    assert_envelope(response, 404, NO_ACTIVE_COMPANY)


async def test_an_unknown_session_id_is_404_as_the_contract_says(
    client: httpx.AsyncClient,
) -> None:
    """interface 3.5 wins over the revision (which ignores sessions): an unknown id is 404."""
    response = await post(client, modern("tools/list"), **{"mcp-session-id": "made.up"})
    assert_envelope(response, 404, SESSION_UNKNOWN)
