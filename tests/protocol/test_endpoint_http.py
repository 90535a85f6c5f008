"""The HTTP face of ``/v1/{tenantKey}/mcp``: methods, body limits, framing errors, tenants,
protocol version header, rate limits, tokens and request ids (interface 4.2, 7.1, 8)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import orjson
import pytest

from frontdesk.app import Frontdesk
from frontdesk.config import MAX_BODY_BYTES
from frontdesk.protocol.errors import (
    INVALID_REQUEST,
    NO_ACTIVE_COMPANY,
    PARSE_ERROR,
    RATE_LIMITED,
    UNAUTHORIZED,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from frontdesk.protocol.versions import SUPPORTED_VERSIONS
from tests.conftest import BASE_URL
from tests.protocol.conftest import Serve
from tests.support.jsonrpc import ACME, JSON_HEADERS, assert_envelope, notification, request

PING = orjson.dumps(request("ping"))


def ping_of_size(size: int) -> bytes:
    """A valid ping request padded with a params member to exactly ``size`` bytes."""
    skeleton = orjson.dumps(request("ping", {"pad": ""}))
    body = orjson.dumps(request("ping", {"pad": "x" * (size - len(skeleton))}))
    assert len(body) == size
    return body


async def chunks(body: bytes, size: int = 16 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


# --- methods -----------------------------------------------------------------------------


async def test_get_is_refused_with_405_and_an_allow_header(client: httpx.AsyncClient) -> None:
    """GET never opens a stream: 405 with an empty body and Allow naming POST."""
    response = await client.get(ACME, headers={"accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.content == b""
    assert "POST" in [item.strip() for item in response.headers["allow"].split(",")]


async def test_delete_acknowledges_with_ok_true(client: httpx.AsyncClient) -> None:
    """DELETE answers 200 with {"ok": true} (interface 4.2)."""
    response = await client.delete(ACME)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["ok"] is True
    assert response.json() == {"ok": True}


async def test_delete_with_a_session_id_acknowledges_with_ok_true(
    client: httpx.AsyncClient, app: Frontdesk
) -> None:
    """DELETE carrying a session id also answers 200 {"ok": true}: sessions hold no state."""
    session_id = app.services.sessions.issue("acme", "2025-11-25")
    response = await client.delete(ACME, headers={"mcp-session-id": session_id})
    assert response.status_code == 200
    assert response.json()["ok"] is True
    assert response.json() == {"ok": True}


async def test_a_single_request_gets_a_single_reply(client: httpx.AsyncClient) -> None:
    """One request object is answered with one reply object, not an array."""
    response = await client.post(ACME, json=request("ping", request_id="abc"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"jsonrpc": "2.0", "id": "abc", "result": {}}


# --- body size ---------------------------------------------------------------------------


async def test_a_body_exactly_at_the_limit_is_served(client: httpx.AsyncClient) -> None:
    """A body of exactly 256 KiB is within the limit."""
    response = await client.post(ACME, content=ping_of_size(MAX_BODY_BYTES), headers=JSON_HEADERS)
    assert response.status_code == 200
    assert response.json()["result"] == {}


async def test_a_streamed_body_exactly_at_the_limit_is_served(client: httpx.AsyncClient) -> None:
    """A chunked body of exactly 256 KiB, sent without Content-Length, is within the limit."""
    response = await client.post(
        ACME, content=chunks(ping_of_size(MAX_BODY_BYTES)), headers=JSON_HEADERS
    )
    assert "content-length" not in response.request.headers
    assert response.status_code == 200


async def test_a_body_one_byte_over_the_limit_is_refused_with_413(
    client: httpx.AsyncClient,
) -> None:
    """A body one byte over 256 KiB answers 413 with a JSON-RPC envelope."""
    response = await client.post(
        ACME, content=ping_of_size(MAX_BODY_BYTES + 1), headers=JSON_HEADERS
    )
    envelope = assert_envelope(response, 413, INVALID_REQUEST)
    assert envelope["id"] is None


async def test_an_announced_oversized_body_is_refused_before_it_is_read(
    client: httpx.AsyncClient,
) -> None:
    """A Content-Length over the limit answers 413 without reading a byte of the body."""
    read: list[bytes] = []

    async def body() -> AsyncIterator[bytes]:
        chunk = b"x" * (MAX_BODY_BYTES + 1)
        read.append(chunk)
        yield chunk

    response = await client.post(
        ACME,
        content=body(),
        headers={**JSON_HEADERS, "content-length": str(MAX_BODY_BYTES + 1)},
    )
    assert_envelope(response, 413, INVALID_REQUEST)
    assert read == []


async def test_a_streamed_oversized_body_is_refused_with_413(client: httpx.AsyncClient) -> None:
    """A chunked body without Content-Length is refused with 413 once it passes 256 KiB."""
    response = await client.post(
        ACME, content=chunks(ping_of_size(MAX_BODY_BYTES + 1)), headers=JSON_HEADERS
    )
    assert "content-length" not in response.request.headers
    assert_envelope(response, 413, INVALID_REQUEST)


async def test_a_streamed_body_is_refused_as_soon_as_it_passes_the_limit(
    client: httpx.AsyncClient,
) -> None:
    """The endpoint stops reading a chunked body at the limit rather than buffering it all."""
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        while sent < 100 * MAX_BODY_BYTES:
            sent += 64 * 1024
            yield b" " * (64 * 1024)

    response = await client.post(ACME, content=endless(), headers=JSON_HEADERS)
    assert_envelope(response, 413)
    assert sent <= MAX_BODY_BYTES + 64 * 1024


# --- malformed bodies --------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"not json", b"{", b"", b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}'],
    ids=["text", "truncated", "empty", "trailing-comma"],
)
async def test_a_body_that_is_not_json_is_refused_with_parse_error(
    client: httpx.AsyncClient, raw: bytes
) -> None:
    """A body that is not JSON answers 400 with a -32700 envelope whose id is null."""
    response = await client.post(ACME, content=raw, headers=JSON_HEADERS)
    envelope = assert_envelope(response, 400, PARSE_ERROR)
    assert envelope["id"] is None


async def test_a_body_of_invalid_utf8_is_refused_with_400(client: httpx.AsyncClient) -> None:
    """Bytes that are not UTF-8 inside otherwise-JSON answer 400 with an envelope."""
    raw = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\xff\xfe"}}'
    assert_envelope(await client.post(ACME, content=raw, headers=JSON_HEADERS), 400, PARSE_ERROR)


INVALID_MESSAGES: dict[str, object] = {
    "id-true": {"jsonrpc": "2.0", "id": True, "method": "ping"},
    "id-false": {"jsonrpc": "2.0", "id": False, "method": "ping"},
    "id-float": {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
    "id-large-float": {"jsonrpc": "2.0", "id": 2.0**63, "method": "ping"},
    "id-null": {"jsonrpc": "2.0", "id": None, "method": "ping"},
    "id-object": {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"},
    "id-array": {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    "method-number": {"jsonrpc": "2.0", "id": 1, "method": 5},
    "method-null": {"jsonrpc": "2.0", "id": 1, "method": None},
    "method-empty": {"jsonrpc": "2.0", "id": 1, "method": ""},
    "method-missing": {"jsonrpc": "2.0", "id": 1},
    "params-array": {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]},
    "params-string": {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"},
    "params-null": {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": None},
    "jsonrpc-missing": {"id": 1, "method": "ping"},
    "jsonrpc-1.0": {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    "jsonrpc-number": {"jsonrpc": 2.0, "id": 1, "method": "ping"},
    "scalar-number": 42,
    "scalar-string": "ping",
    "scalar-null": None,
    "scalar-true": True,
    "batch-of-numbers": [1, 2],
    "batch-with-a-string": [request("ping"), "ping"],
    "batch-with-an-array": [request("ping"), [request("ping")]],
    "batch-with-one-bad-item": [request("ping"), {"jsonrpc": "2.0", "id": True, "method": "x"}],
    "response-not-request": {"jsonrpc": "2.0", "id": 1, "result": {}},
}


@pytest.mark.parametrize("document", INVALID_MESSAGES.values(), ids=INVALID_MESSAGES.keys())
async def test_json_that_is_not_a_contract_request_is_refused_with_400(
    client: httpx.AsyncClient, document: object
) -> None:
    """JSON that breaks interface 2.9 answers 400 with a -32600 envelope."""
    response = await client.post(ACME, content=orjson.dumps(document), headers=JSON_HEADERS)
    assert_envelope(response, 400, INVALID_REQUEST)


async def test_a_refused_request_with_a_valid_id_is_answered_under_that_id(
    client: httpx.AsyncClient,
) -> None:
    """The 400 envelope names the request's id when the id itself was valid."""
    document = {"jsonrpc": "1.0", "id": 7, "method": "ping"}
    response = await client.post(ACME, json=document)
    assert assert_envelope(response, 400, INVALID_REQUEST)["id"] == 7


async def test_a_refused_request_with_an_invalid_id_is_answered_with_a_null_id(
    client: httpx.AsyncClient,
) -> None:
    """When the id itself is what is wrong, the 400 envelope's id is null."""
    response = await client.post(ACME, json={"jsonrpc": "2.0", "id": True, "method": "ping"})
    assert assert_envelope(response, 400, INVALID_REQUEST)["id"] is None


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", None],
)
async def test_a_body_that_is_not_sent_as_json_is_refused_with_400(
    client: httpx.AsyncClient, content_type: str | None
) -> None:
    """A POST whose Content-Type is not application/json (or is absent) answers 400."""
    headers = {} if content_type is None else {"content-type": content_type}
    response = await client.post(ACME, content=PING, headers=headers)
    if content_type is None:
        assert "content-type" not in response.request.headers
    assert_envelope(response, 400, INVALID_REQUEST)


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/json "]
)
async def test_json_content_type_with_parameters_or_case_is_accepted(
    client: httpx.AsyncClient, content_type: str
) -> None:
    """Media type matching ignores case and parameters, as HTTP says."""
    response = await client.post(ACME, content=PING, headers={"content-type": content_type})
    assert response.status_code == 200
    assert response.json()["result"] == {}


# --- tenants -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tenant_key",
    ["nobody", "dormant", "yankee", "ACME", "-acme", "acme-", "ac_me", "a" * 64, "ac%20me", ""],
    ids=[
        "unknown",
        "inactive",
        "other-region",
        "upper-case",
        "leading-dash",
        "trailing-dash",
        "underscore",
        "too-long",
        "space",
        "empty",
    ],
)
async def test_a_tenant_key_no_active_company_has_answers_404(
    client: httpx.AsyncClient, tenant_key: str
) -> None:
    """Unknown, inactive, other-region and malformed tenant keys all answer 404 envelopes."""
    response = await client.post(f"/v1/{tenant_key}/mcp", json=request("ping"))
    assert_envelope(response, 404, NO_ACTIVE_COMPANY)


async def test_inactive_and_other_region_companies_look_like_unknown_ones(
    client: httpx.AsyncClient,
) -> None:
    """An inactive or other-region company cannot be told apart from a key nobody has."""
    bodies = [
        (await client.post(f"/v1/{key}/mcp", json=request("ping"))).json()
        for key in ("nobody", "dormant", "yankee")
    ]
    assert bodies[0] == bodies[1] == bodies[2]


async def test_a_company_of_this_instances_region_is_served_in_that_region(
    serve: Serve,
) -> None:
    """yankee (region us) is served by an instance whose region is us, and acme is not."""
    client = await serve(region="us")
    response = await client.post("/v1/yankee/mcp", json=request("ping"))
    assert response.status_code == 200
    acme = await client.post(ACME, json=request("ping"))
    assert_envelope(acme, 404, NO_ACTIVE_COMPANY)


# --- MCP-Protocol-Version ----------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
async def test_a_supported_protocol_version_header_is_served(
    client: httpx.AsyncClient, version: str
) -> None:
    """A request announcing a version we speak is served."""
    response = await client.post(
        ACME, json=request("ping"), headers={"mcp-protocol-version": version}
    )
    assert response.status_code == 200
    assert response.json()["result"] == {}


@pytest.mark.parametrize("version", ["2099-01-01", "2024-10-07", "1.0", ""])
async def test_an_unsupported_protocol_version_header_is_refused_with_400(
    client: httpx.AsyncClient, version: str
) -> None:
    """A present but unsupported MCP-Protocol-Version answers 400 with -32022, the request's
    id, the versions served and the one asked for (MCP 2026-07-28)."""
    response = await client.post(
        ACME, json=request("ping", request_id=41), headers={"mcp-protocol-version": version}
    )
    envelope = assert_envelope(response, 400, UNSUPPORTED_PROTOCOL_VERSION)
    assert envelope["id"] == 41
    assert envelope["error"]["data"] == {
        "supported": [*SUPPORTED_VERSIONS, "2026-07-28"],
        "requested": version,
    }


async def test_a_request_without_a_protocol_version_header_is_served(
    client: httpx.AsyncClient,
) -> None:
    """No MCP-Protocol-Version header: served (clients before 2025-06-18 send none)."""
    response = await client.post(ACME, json=request("ping"))
    assert "mcp-protocol-version" not in response.request.headers
    assert response.status_code == 200


# --- rate limits -------------------------------------------------------------------------


async def test_the_fourth_request_in_a_minute_is_refused_with_429(
    client: httpx.AsyncClient,
) -> None:
    """strict allows 3 a minute: the 4th answers 429, Retry-After in whole seconds, envelope."""
    for _ in range(3):
        response = await client.post("/v1/strict/mcp", json=request("ping"))
        assert response.status_code == 200
    response = await client.post(
        "/v1/strict/mcp", json=request("ping"), headers={"x-request-id": "limited-1"}
    )
    assert_envelope(response, 429, RATE_LIMITED)
    retry_after = response.headers["retry-after"]
    assert retry_after.isdigit()
    assert 1 <= int(retry_after) <= 60
    assert response.headers["x-request-id"] == "limited-1"


async def test_notifications_count_against_the_rate_limit(client: httpx.AsyncClient) -> None:
    """Every POST counts, whether or not it expects a reply."""
    for _ in range(3):
        response = await client.post("/v1/strict/mcp", json=notification("notifications/x"))
        assert response.status_code == 202
    response = await client.post("/v1/strict/mcp", json=request("ping"))
    assert response.status_code == 429


async def test_unknown_tenant_keys_cannot_drive_database_reads_at_will(serve: Serve) -> None:
    """A tenant key this instance does not hold costs its address a count against the
    instance's limit before it is looked up: past it, 429, and the address is not read for."""
    client = await serve(mcp_rate_limit="3/minute")
    for number in range(3):
        response = await client.post(f"/v1/nobody-{number}/mcp", json=request("ping"))
        assert response.status_code == 404
    response = await client.post("/v1/nobody-else/mcp", json=request("ping"))
    assert_envelope(response, 429, RATE_LIMITED)


async def test_a_batch_counts_as_its_calls(client: httpx.AsyncClient) -> None:
    """strict allows 3 a minute: a batch of 3 uses them all, and a batch that would pass the
    limit is refused whole, none of its calls answered."""
    three = [request("ping", request_id=number) for number in range(1, 4)]
    response = await client.post("/v1/strict/mcp", json=three)
    assert response.status_code == 200
    assert len(response.json()) == 3
    assert_envelope(await client.post("/v1/strict/mcp", json=request("ping")), 429, RATE_LIMITED)


async def test_a_batch_past_the_limit_is_refused_whole(client: httpx.AsyncClient) -> None:
    """Two calls in, a batch of two would be the fourth and fifth: 429 for the request."""
    for _ in range(2):
        assert (await client.post("/v1/strict/mcp", json=request("ping"))).status_code == 200
    pair = [request("ping", request_id=7), request("ping", request_id=8)]
    response = await client.post("/v1/strict/mcp", json=pair)
    assert response.status_code == 429
    assert "retry-after" in response.headers


async def test_the_rate_limit_is_per_caller_address(
    client: httpx.AsyncClient, app: Frontdesk
) -> None:
    """Another client address has its own allowance when the first is used up."""
    for _ in range(4):
        await client.post("/v1/strict/mcp", json=request("ping"))
    assert (await client.post("/v1/strict/mcp", json=request("ping"))).status_code == 429
    transport = httpx.ASGITransport(app=app, client=("198.51.100.20", 50000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as other:
        response = await other.post("/v1/strict/mcp", json=request("ping"))
    assert response.status_code == 200


async def test_the_rate_limit_is_per_company(client: httpx.AsyncClient) -> None:
    """Using up strict's allowance leaves the same caller's allowance at acme untouched."""
    for _ in range(4):
        await client.post("/v1/strict/mcp", json=request("ping"))
    assert (await client.post(ACME, json=request("ping"))).status_code == 200


# --- bearer tokens -----------------------------------------------------------------------


async def test_a_token_sent_to_a_company_without_signin_is_refused_with_401(
    client: httpx.AsyncClient,
) -> None:
    """Any bearer token at a company without sign-in: 401, invalid_token, no discovery."""
    response = await client.post(
        ACME, json=request("ping"), headers={"authorization": "Bearer some-token"}
    )
    assert_envelope(response, 401, UNAUTHORIZED)
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert "resource_metadata" not in challenge


# --- request ids -------------------------------------------------------------------------

REPLIES: dict[str, tuple[str, str, bytes, dict[str, str], int]] = {
    "ok": ("POST", ACME, PING, JSON_HEADERS, 200),
    "notification": ("POST", ACME, orjson.dumps(notification("n/x")), JSON_HEADERS, 202),
    "parse-error": ("POST", ACME, b"{", JSON_HEADERS, 400),
    "content-type": ("POST", ACME, PING, {"content-type": "text/plain"}, 400),
    "no-company": ("POST", "/v1/nobody/mcp", PING, JSON_HEADERS, 404),
    "session": ("POST", ACME, PING, {**JSON_HEADERS, "mcp-session-id": "x.y"}, 404),
    "too-large": ("POST", ACME, ping_of_size(MAX_BODY_BYTES + 1), JSON_HEADERS, 413),
    "token": ("POST", ACME, PING, {**JSON_HEADERS, "authorization": "Bearer t"}, 401),
    "get": ("GET", ACME, b"", {}, 405),
    "delete": ("DELETE", ACME, b"", {}, 200),
}


@pytest.mark.parametrize("case", REPLIES.values(), ids=REPLIES.keys())
async def test_every_reply_echoes_a_safe_request_id(
    client: httpx.AsyncClient, case: tuple[str, str, bytes, dict[str, str], int]
) -> None:
    """Whatever the outcome, the reply carries the caller's X-Request-Id back."""
    method, path, body, headers, status = case
    response = await client.request(
        method, path, content=body or None, headers={**headers, "x-request-id": "req-42.a:b"}
    )
    assert response.status_code == status
    assert response.headers["x-request-id"] == "req-42.a:b"


@pytest.mark.parametrize("case", REPLIES.values(), ids=REPLIES.keys())
async def test_every_reply_carries_a_request_id(
    client: httpx.AsyncClient, case: tuple[str, str, bytes, dict[str, str], int]
) -> None:
    """Without an incoming X-Request-Id, every reply still carries one of ours."""
    method, path, body, headers, status = case
    response = await client.request(method, path, content=body or None, headers=headers)
    assert response.status_code == status
    assert response.headers["x-request-id"]


@pytest.mark.parametrize(
    "supplied", ["has space", "a" * 129, "semi;colon", 'quote"d', "new\\nline"]
)
async def test_an_unsafe_request_id_is_replaced(client: httpx.AsyncClient, supplied: str) -> None:
    """An X-Request-Id that is not short and plain is replaced by one of ours."""
    response = await client.post(ACME, json=request("ping"), headers={"x-request-id": supplied})
    assert response.status_code == 200
    echoed = response.headers["x-request-id"]
    assert echoed
    assert echoed != supplied
