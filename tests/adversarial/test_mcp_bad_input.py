"""Bad input at the MCP endpoint (interface 2.9, 7.1, 8): whatever arrives, the answer is a
reply, a 202, or the contract's 400/413 with a JSON-RPC envelope; never a 5xx, never an
internal error, never a crash."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from frontdesk.config import MAX_BATCH, MAX_BODY_BYTES
from frontdesk.limits.json_nesting import MAX_NESTING
from frontdesk.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from tests.adversarial.conftest import FUZZ

pytestmark = pytest.mark.anyio

ACME = "/v1/acme/mcp"
JSON = {"content-type": "application/json"}
METHODS = (
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "server/discover",
)
# acme's tools, less the two that sleep or crash on purpose.
TOOLS = ("echo", "add", "whoami", "refuse", "wrong_shape", "rich", "nope")
INT64_MIN, UINT64_MAX = -(2**63), 2**64 - 1

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
ids = st.one_of(
    st.integers(min_value=INT64_MIN, max_value=UINT64_MAX), st.text(max_size=10), json_values
)


@dataclass(frozen=True, slots=True)
class Deep:
    """A value nested ``depth`` levels, around orjson's 1,024 and Python's 1,000; written
    out as text only when the body is sent, as neither Python nor hypothesis can print it."""

    depth: int
    bracket: str

    def text(self) -> str:
        if self.bracket == "[":
            return "[" * self.depth + "0" + "]" * self.depth
        return '{"k":' * self.depth + "0" + "}" * self.depth


# Depths well inside orjson's limit of 1,024 levels, and well past it (never at the edge).
depths = st.integers(min_value=1, max_value=1000) | st.integers(min_value=1030, max_value=1100)
nested = st.builds(Deep, depths, st.sampled_from("[{"))
MAX_DEPTH = 1024
_DEEP = re.compile(r'"@deep:(\d+):(.)@"')


params_values = st.one_of(json_objects, json_values, nested)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """Objects near the contract's request shape, each member right, wrong or missing."""
    method = draw(st.sampled_from(METHODS) | st.text(max_size=12) | json_values)
    params: Any = draw(params_values)
    if method in ("tools/call", "prompts/get") and draw(st.booleans()):
        params = {"name": draw(st.sampled_from(TOOLS) | json_values), "arguments": params}
    members = {
        "jsonrpc": draw(st.sampled_from(["2.0", "2", "1.0"]) | json_values),
        "id": draw(ids),
        "method": method,
        "params": params,
        draw(st.text(max_size=6)): draw(json_values),
    }
    keep = draw(st.lists(st.sampled_from(sorted(members)), unique=True))
    if draw(st.booleans()):
        keep = sorted({*keep, "jsonrpc", "method"})
    return {name: members[name] for name in keep}


bodies = st.one_of(
    messages(),
    st.lists(st.one_of(messages(), json_values), max_size=MAX_BATCH + 2),
    json_values,
)


def dumps(document: Any) -> bytes:
    """JSON text as a client might send it: any integer, any nesting (orjson stops at 254)."""

    def placeholder(value: object) -> str:
        assert isinstance(value, Deep)
        return f"@deep:{value.depth}:{value.bracket}@"

    text = json.dumps(document, ensure_ascii=False, default=placeholder)
    return _DEEP.sub(lambda match: Deep(int(match[1]), match[2]).text(), text).encode()


def depth(value: Any) -> int:
    """How many arrays and objects deep a value nests."""
    if isinstance(value, Deep):
        return value.depth
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    return 0


def is_contract_request(document: Any) -> bool:
    """interface 2.9 and DESIGN's reading of it, stated apart from the parser. A body nested
    past MAX_NESTING levels (RFC 8259 9 lets an implementation set a limit) is not one."""
    return depth(document) <= MAX_NESTING and _is_shaped(document)


def refusal_code(document: Any) -> int:
    """The code a body that is no contract request is refused with: past the parser's own
    limit it is not read at all; shaped right but too deep in a request's params, -32602;
    anything else, -32600."""
    if depth(document) > MAX_DEPTH:
        return PARSE_ERROR
    if _is_shaped(document) and _params_too_deep(document):
        return INVALID_PARAMS
    return INVALID_REQUEST


def _is_shaped(document: Any) -> bool:
    if isinstance(document, list):
        return 1 <= len(document) <= MAX_BATCH and all(map(_is_message, document))
    return _is_message(document)


def _params_too_deep(document: Any) -> bool:
    """Whether some request's params take the body past MAX_NESTING levels."""
    members, level = (document, 2) if isinstance(document, list) else ([document], 1)
    return any(level + depth(member.get("params", {})) > MAX_NESTING for member in members)


def _is_message(item: Any) -> bool:
    if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
        return False
    method = item.get("method")
    if not isinstance(method, str) or not method:
        return False
    params = item.get("params", {})
    if not isinstance(params, dict) and not (isinstance(params, Deep) and params.bracket == "{"):
        return False
    if "id" not in item:
        return True
    request_id = item["id"]
    if isinstance(request_id, bool):
        return False
    # An integer id must come back unchanged, so it must fit the 64 bits JSON parsers keep.
    return isinstance(request_id, str) or (
        isinstance(request_id, int) and INT64_MIN <= request_id <= UINT64_MAX
    )


def assert_envelope(response: httpx.Response, status: int) -> dict[str, Any]:
    """A JSON-RPC error envelope (interface 2.10) with this status."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/json"
    envelope: dict[str, Any] = response.json()
    assert envelope["jsonrpc"] == "2.0"
    assert "id" in envelope
    assert envelope["id"] is None or type(envelope["id"]) in (int, str)
    assert type(envelope["error"]["code"]) is int
    assert type(envelope["error"]["message"]) is str
    assert "result" not in envelope
    return envelope


def assert_no_internal_error(response: httpx.Response) -> None:
    """A reply or batch of replies, none of them the -32603 a bug would answer."""
    assert response.status_code in (200, 202), (response.status_code, response.text[:300])
    if response.status_code == 202:
        assert response.content == b""
        return
    replies = response.json()
    for reply in replies if isinstance(replies, list) else [replies]:
        assert reply["jsonrpc"] == "2.0"
        assert reply.get("error", {}).get("code") != INTERNAL_ERROR, reply


# Generated ---------------------------------------------------------------------------------


@hypothesis_settings(FUZZ, max_examples=300)
@given(st.binary(max_size=2048))
async def test_any_bytes_are_answered_by_the_contract(
    client: httpx.AsyncClient, raw: bytes
) -> None:
    """Random bytes: a 400 envelope, unless they happen to be a contract request."""
    response = await client.post(ACME, content=raw, headers=JSON)
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        assert assert_envelope(response, 400)["error"]["code"] == PARSE_ERROR
        return
    if is_contract_request(document):
        assert_no_internal_error(response)
    else:
        assert assert_envelope(response, 400)["error"]["code"] == refusal_code(document)


@hypothesis_settings(FUZZ, max_examples=250)
@given(bodies)
async def test_any_json_is_a_reply_or_a_400_envelope(
    client: httpx.AsyncClient, document: Any
) -> None:
    """Contract requests are answered without -32603; anything else is one 400 envelope."""
    response = await client.post(ACME, content=dumps(document), headers=JSON)
    if is_contract_request(document):
        assert_no_internal_error(response)
    else:
        envelope = assert_envelope(response, 400)
        assert envelope["error"]["code"] == refusal_code(document)


@hypothesis_settings(FUZZ, max_examples=250)
@given(st.sampled_from(METHODS[:-2]), params_values, st.sampled_from(TOOLS))
async def test_no_params_make_a_method_fail_internally(
    client: httpx.AsyncClient, method: str, params: Any, tool: str
) -> None:
    """Every method, any params object (deeply nested too): a reply, never -32603; params
    nested past the limit, -32602 in a 400 before the method runs."""
    if not isinstance(params, dict):
        params = {"name": tool, "arguments": params, "uri": params, "level": params}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await client.post(ACME, content=dumps(body), headers=JSON)
    if depth(body) > MAX_NESTING:
        envelope = assert_envelope(response, 400)
        assert envelope["error"]["code"] == refusal_code(body)
        assert envelope["id"] == (1 if depth(body) <= MAX_DEPTH else None)
    else:
        assert_no_internal_error(response)


# Targeted ----------------------------------------------------------------------------------

DEEP = 100_000
TARGETED: dict[str, bytes] = {
    "deep-arrays": b"[" * DEEP + b"]" * DEEP,
    # 40,000 levels of objects: deep, yet under 256 KB.
    "deep-objects": b'{"a":' * (DEEP // 2 - 10_000) + b"1" + b"}" * (DEEP // 2 - 10_000),
    "deep-unclosed": b"[" * (MAX_BODY_BYTES - 1),
    "deep-params": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":'
    + b"[" * DEEP
    + b"]" * DEEP
    + b"}}",
    "id-over-64-bits": b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}',
    "id-under-64-bits": b'{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}',
    "id-huge": b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}',
    "id-exponent": b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    # -0.0 is a whole number, so the integer 0 (docs/design.md, MCP endpoint); -0.5 is not.
    "id-negative-fraction": b'{"jsonrpc":"2.0","id":-0.5,"method":"ping"}',
    "id-nan": b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    "param-infinity": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-1e99999}}',
    "param-huge-int": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":'
    + b"1" * 4000
    + b"}}",
    "duplicate-jsonrpc": b'{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"ping"}',
    "duplicate-id": b'{"jsonrpc":"2.0","id":1,"id":true,"method":"ping"}',
    "duplicate-method": b'{"jsonrpc":"2.0","id":1,"method":"ping","method":5}',
    "byte-order-mark": b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
    "utf-16": '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"),
    "utf-8-overlong": b'{"jsonrpc":"2.0","id":"\xc0\xaf","method":"ping"}',
    "utf-8-surrogate": b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}',
    "utf-8-truncated": b'{"jsonrpc":"2.0","id":"\xe2\x82","method":"ping"}',
    "escaped-lone-surrogate": b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    "nul-in-json": b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00',
    "nul-in-string": b'{"jsonrpc":"2.0","id":"a\x00b","method":"ping"}',
    "trailing-garbage": b'{"jsonrpc":"2.0","id":1,"method":"ping"} {}',
    "two-documents": b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"ping"}',
    "comment": b'{"jsonrpc":"2.0","id":1,/* hi */"method":"ping"}',
    "single-quotes": b"{'jsonrpc':'2.0','id':1,'method':'ping'}",
    "batch-of-junk": b'[1,"x",null,true,[],{},{"jsonrpc":"2.0"},{"method":"ping"}]',
    "batch-valid-then-junk": b'[{"jsonrpc":"2.0","id":1,"method":"ping"},7]',
    "batch-21-valid": b"[" + b",".join([b'{"jsonrpc":"2.0","id":1,"method":"ping"}'] * 21) + b"]",
    "batch-nested": b'[[{"jsonrpc":"2.0","id":1,"method":"ping"}]]',
    "batch-empty": b"[]",
    "whitespace-only": b" \t\r\n ",
}


async def test_malformed_bodies_are_a_400_envelope(client: httpx.AsyncClient) -> None:
    """Deep nesting, numbers beyond 64 bits, duplicate keys, bad UTF-8, junk batches: 400."""
    for case, raw in TARGETED.items():
        response = await client.post(ACME, content=raw, headers=JSON)
        assert response.status_code == 400, case
        assert assert_envelope(response, 400)["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)


async def test_a_duplicate_key_is_read_one_way_only(client: httpx.AsyncClient) -> None:
    """Of duplicate members the last wins, so what is checked is what is answered."""
    raw = b'{"jsonrpc":"2.0","id":1,"method":"nope","method":"ping"}'
    response = await client.post(ACME, content=raw, headers=JSON)
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_deeply_nested_tool_arguments_are_invalid_params_before_the_tool(
    client: httpx.AsyncClient,
) -> None:
    """Arguments nested up to MAX_NESTING: a tool result, never an internal error; past it,
    and up to the parser's own limit, -32602 in a 400 with the request's id."""
    raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
    # Three levels hold the arrays: the request, params and arguments; at MAX_DEPTH - 3 the
    # body reaches the parser's own 1,024 exactly.
    for levels in (1, MAX_NESTING - 3, MAX_NESTING - 2, 250, 1000, MAX_DEPTH - 3):
        for tool in ("echo", "add", "whoami", "rich"):
            arguments = b'{"text":' + b"[" * levels + b"]" * levels + b"}"
            body = raw % (tool.encode(), arguments)
            response = await client.post(ACME, content=body, headers=JSON)
            if 3 + levels <= MAX_NESTING:
                assert response.status_code == 200, (tool, levels)
                assert_no_internal_error(response)
            else:
                envelope = assert_envelope(response, 400)
                assert envelope["error"]["code"] == INVALID_PARAMS, (tool, levels)
                assert envelope["id"] == 1


async def test_an_unhashable_log_level_is_invalid_params(client: httpx.AsyncClient) -> None:
    """logging/setLevel with a list or object level: -32602, not an internal error."""
    for level in ("[]", "{}", '["debug"]', '{"debug":1}', "1", "null"):
        raw = '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":%s}}'
        response = await client.post(ACME, content=(raw % level).encode(), headers=JSON)
        assert_no_internal_error(response)
        assert response.json()["error"]["code"] == INVALID_PARAMS, level


async def test_a_giant_method_name_is_method_not_found(client: httpx.AsyncClient) -> None:
    """A 250 KB method name fits the limit and is simply not a method we have."""
    method = "m" * (MAX_BODY_BYTES - 100)
    raw = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method})
    response = await client.post(ACME, content=raw, headers=JSON)
    assert_no_internal_error(response)
    assert response.json()["error"]["code"] == -32601


async def test_a_giant_string_past_the_limit_is_413(client: httpx.AsyncClient) -> None:
    """A string that takes the body past 256 KB: 413 with an envelope, before parsing."""
    raw = orjson.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"s": "x" * MAX_BODY_BYTES}}
    )
    assert_envelope(await client.post(ACME, content=raw, headers=JSON), 413)


ODD_CONTENT_TYPES = (
    "application/json-seq",
    "application/*",
    "*/*",
    "application/json, text/plain",
    "application/ld+json",
    "multipart/form-data; boundary=x",
    "text/json",
    "json",
    "",
    ";",
    'application/json\t;charset=utf-8 junk="',
    "application/json" + "; x=y" * 500,
)


async def test_odd_content_types_are_answered_without_a_5xx(client: httpx.AsyncClient) -> None:
    """Only application/json (with any parameters) is read; anything else is 400."""
    raw = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    for content_type in ODD_CONTENT_TYPES:
        response = await client.post(ACME, content=raw, headers={"content-type": content_type})
        if content_type.split(";")[0].strip().lower() == "application/json":
            assert response.status_code == 200, content_type
        else:
            assert response.status_code == 400, content_type
            assert assert_envelope(response, 400)["error"]["code"] == INVALID_REQUEST


async def test_repeated_content_type_headers_are_answered_without_a_5xx(
    client: httpx.AsyncClient,
) -> None:
    """Two Content-Type headers: the first is read, and the answer is a contract one."""
    raw = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    headers = [("content-type", "text/plain"), ("content-type", "application/json")]
    assert_envelope(await client.post(ACME, content=raw, headers=headers), 400)


ODD_HEADERS = (
    ("mcp-session-id", "\xff" * 10),
    ("mcp-session-id", "a" * 8000),
    ("mcp-session-id", "x.y.z"),
    ("mcp-protocol-version", "\xff\xfe"),
    ("mcp-protocol-version", "2025-06-18" * 100),
    ("authorization", "Bearer \xff"),
)


async def test_odd_headers_are_answered_without_a_5xx(client: httpx.AsyncClient) -> None:
    """Session, version and auth headers holding junk: a 4xx envelope, never a 5xx."""
    raw = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    for name, value in ODD_HEADERS:
        headers = {b"content-type": b"application/json", name.encode(): value.encode("latin-1")}
        response = await client.post(ACME, content=raw, headers=headers)
        assert 400 <= response.status_code < 500, (name, response.text)
        assert_envelope(response, response.status_code)
