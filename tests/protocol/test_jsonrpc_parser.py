"""The JSON-RPC framing: what ``parse_body`` admits (interface 2.9) and the envelopes it builds."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontdesk.config import MAX_BATCH
from frontdesk.limits.json_nesting import MAX_NESTING
from frontdesk.protocol.errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RpcError,
)
from frontdesk.protocol.jsonrpc import Body, failure, parse_body, success

# No example database: the tests leave nothing behind in the work tree.
quick = settings(database=None, max_examples=200, deadline=None)

request_ids = st.one_of(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.text())
methods = st.text(min_size=1)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(), inner, max_size=4)
    ),
    max_leaves=12,
)
params_objects = st.dictionaries(st.text(), json_values, max_size=5)
# Everything JSON can say that is not a string or an integer (of 64 bits, signed or not).
bad_ids = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda number: not number.is_integer() or not -(2**63) < number < 2**63
    ),
    st.lists(json_scalars, max_size=3),
    st.dictionaries(st.text(), json_scalars, max_size=3),
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": draw(methods)}
    if draw(st.booleans()):
        message["id"] = draw(request_ids)
    if draw(st.booleans()):
        message["params"] = draw(params_objects)
    return message


def encode(document: object) -> bytes:
    return orjson.dumps(document)


@quick
@given(messages())
def test_a_valid_message_is_read_as_sent(message: dict[str, Any]) -> None:
    """Every request or notification the contract admits is read with its id, method, params."""
    body = parse_body(encode(message))
    assert not body.is_batch
    [parsed] = body.messages
    assert parsed.method == message["method"]
    assert parsed.params == message.get("params", {})
    assert parsed.is_notification == ("id" not in message)
    assert parsed.id == message.get("id")


@settings(database=None, max_examples=50, deadline=None)
@given(st.lists(messages(), min_size=1, max_size=MAX_BATCH))
def test_a_batch_of_1_to_20_keeps_its_order(batch: list[dict[str, Any]]) -> None:
    """A batch of 1 to 20 is read as a batch, its messages in the order they were sent."""
    body = parse_body(encode(batch))
    assert body.is_batch
    assert [(m.method, m.id) for m in body.messages] == [
        (item["method"], item.get("id")) for item in batch
    ]


@quick
@given(st.integers(min_value=MAX_BATCH + 1, max_value=500), request_ids)
def test_a_batch_over_20_is_refused(size: int, request_id: object) -> None:
    """More than 20 messages in a batch is not a body the contract admits."""
    batch = [{"jsonrpc": "2.0", "id": request_id, "method": "ping"}] * size
    with pytest.raises(InvalidRequest):
        parse_body(encode(batch))


def test_an_empty_batch_is_refused() -> None:
    """[] is an invalid request, not an empty reply."""
    with pytest.raises(InvalidRequest):
        parse_body(b"[]")


@quick
@given(messages(), bad_ids)
def test_an_id_that_is_not_a_string_or_integer_is_refused(
    message: dict[str, Any], bad_id: object
) -> None:
    """An id of null, a boolean, a fraction, an array or an object is refused (interface 2.9)."""
    with pytest.raises(InvalidRequest):
        parse_body(encode({**message, "id": bad_id}))


@pytest.mark.parametrize("number", [-(2**63) - 1, -(2**63) - 512, -(2**64), 2**64, 10**30])
def test_an_integer_past_64_bits_is_refused(number: int) -> None:
    """orjson reads it as a float, which would answer with another id: refused instead."""
    with pytest.raises(InvalidRequest):
        parse_body(b'{"jsonrpc": "2.0", "method": "ping", "id": %d}' % number)


@quick
@given(messages(), st.integers(min_value=-(2**53), max_value=2**53))
def test_an_integer_written_with_a_fraction_or_exponent_is_that_integer(
    message: dict[str, Any], number: int
) -> None:
    """7.0 and 7e0 are the integer 7 (JSON Schema's integer, which openapi.yaml names)."""
    for spelled in (f"{number}.0", f"{number}e0"):
        without_id = {key: value for key, value in message.items() if key != "id"}
        raw = b'{"id":' + spelled.encode() + b"," + encode(without_id)[1:]
        [parsed] = parse_body(raw).messages
        assert parsed.id == number
        assert type(parsed.id) is int


@quick
@given(messages(), st.one_of(json_scalars.filter(lambda v: v is not None), st.lists(json_scalars)))
def test_params_that_are_not_an_object_are_refused(message: dict[str, Any], params: object) -> None:
    """params by position (an array) or as a scalar is refused: the contract says object."""
    with pytest.raises(InvalidRequest):
        parse_body(encode({**message, "params": params}))


@quick
@given(messages(), st.one_of(json_scalars.filter(lambda v: v != "2.0"), st.just("2")))
def test_a_jsonrpc_member_other_than_2_0_is_refused(
    message: dict[str, Any], version: object
) -> None:
    """Only jsonrpc "2.0" is JSON-RPC 2.0."""
    with pytest.raises(InvalidRequest):
        parse_body(encode({**message, "jsonrpc": version}))


@quick
@given(messages())
def test_a_missing_jsonrpc_member_is_refused(message: dict[str, Any]) -> None:
    """A message without the jsonrpc member is refused."""
    del message["jsonrpc"]
    with pytest.raises(InvalidRequest):
        parse_body(encode(message))


@quick
@given(messages(), st.one_of(st.just(""), json_scalars.filter(lambda v: not isinstance(v, str))))
def test_a_method_that_is_not_a_non_empty_string_is_refused(
    message: dict[str, Any], method: object
) -> None:
    """The method must be a non-empty string."""
    with pytest.raises(InvalidRequest):
        parse_body(encode({**message, "method": method}))


@quick
@given(json_scalars)
def test_a_scalar_body_is_refused(document: object) -> None:
    """A body that is JSON but neither an object nor an array is an invalid request."""
    with pytest.raises(InvalidRequest):
        parse_body(encode(document))


@quick
@given(st.lists(st.one_of(json_scalars, st.lists(json_scalars, max_size=2)), min_size=1))
def test_a_batch_item_that_is_not_an_object_is_refused(items: list[object]) -> None:
    """Every batch item must be a JSON object."""
    with pytest.raises(InvalidRequest):
        parse_body(encode(items[:MAX_BATCH]))


def outcome(raw: bytes) -> Body | RpcError:
    """What the parser makes of ``raw``: the body, or the JSON-RPC error it raised."""
    try:
        return parse_body(raw)
    except RpcError as error:
        return error


@quick
@given(st.binary())
def test_any_bytes_parse_or_raise_a_json_rpc_error(raw: bytes) -> None:
    """Whatever the body holds, the parser answers with messages or a 400-class RpcError."""
    result = outcome(raw)
    if isinstance(result, RpcError):
        assert isinstance(result, ParseError | InvalidRequest)
        assert result.status == 400
    else:
        assert 1 <= len(result.messages) <= MAX_BATCH


@quick
@given(json_values)
def test_any_json_parses_or_raises_invalid_request(document: object) -> None:
    """Any JSON document is either admitted or refused as an invalid request, never a crash."""
    result = outcome(encode(document))
    if isinstance(result, RpcError):
        assert type(result) is InvalidRequest
        assert result.code == INVALID_REQUEST


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"not json", b'{"jsonrpc": "2.0",}', b"\xff\xfe{}", b'{"a": "\xc3\x28"}'],
)
def test_text_that_is_not_json_is_a_parse_error(raw: bytes) -> None:
    """Bytes that are not JSON, including invalid UTF-8, raise ParseError (-32700)."""
    with pytest.raises(ParseError) as raised:
        parse_body(raw)
    assert raised.value.code == PARSE_ERROR


def test_a_refused_message_keeps_its_valid_id() -> None:
    """A request refused for another field still names its id, so the client can match it."""
    with pytest.raises(InvalidRequest) as raised:
        parse_body(b'{"jsonrpc": "1.0", "id": "abc", "method": "ping"}')
    assert raised.value.request_id == "abc"


def test_success_envelope_has_the_contracts_fields() -> None:
    """A success reply is jsonrpc, id and result (interface 2.10)."""
    assert success(7, {"a": 1}) == {"jsonrpc": "2.0", "id": 7, "result": {"a": 1}}


def test_failure_envelope_has_integer_code_and_string_message() -> None:
    """An error reply carries an error object with an integer code and a string message."""
    reply = failure("x", MethodNotFound("Method not found: nope"))
    assert reply == {
        "jsonrpc": "2.0",
        "id": "x",
        "error": {"code": METHOD_NOT_FOUND, "message": "Method not found: nope"},
    }


def test_failure_envelope_carries_data_when_given() -> None:
    """Error data is passed through in the error object."""
    reply = failure(None, InvalidRequest("bad", data={"why": 1}))
    assert reply["id"] is None
    assert reply["error"]["data"] == {"why": 1}


# Nesting ---------------------------------------------------------------------------------


def nested(levels: int, bracket: str = "[") -> str:
    """A JSON value of ``levels`` arrays (or objects) one inside the other."""
    if bracket == "[":
        return "[" * levels + "]" * levels
    return '{"k":' * (levels - 1) + "{}" + "}" * (levels - 1)


def ping_with_params(params_levels: int, bracket: str = "[", request_id: int = 7) -> str:
    """A ping whose params nest ``params_levels`` levels, params itself the first."""
    value = nested(params_levels - 1, bracket) if params_levels > 1 else "0"
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"ping","params":{{"a":{value}}}}}'


@pytest.mark.parametrize("bracket", ["[", "{"])
def test_params_nested_up_to_the_limit_are_read(bracket: str) -> None:
    """A request nests MAX_NESTING levels in all: its own, and params' MAX_NESTING - 1."""
    body = parse_body(ping_with_params(MAX_NESTING - 1, bracket).encode())
    assert body.messages[0].id == 7
    batch = f"[{ping_with_params(MAX_NESTING - 2, bracket)}]"
    assert parse_body(batch.encode()).is_batch


@pytest.mark.parametrize("bracket", ["[", "{"])
def test_params_nested_past_the_limit_are_invalid_params_with_the_id(bracket: str) -> None:
    """One level more, and well past what orjson can write (254): -32602, naming the
    request, raised by the parser, so before anything runs."""
    for levels in (MAX_NESTING, 300, 1000):
        with pytest.raises(InvalidParams) as raised:
            parse_body(ping_with_params(levels, bracket).encode())
        assert raised.value.request_id == 7
        assert str(MAX_NESTING) in raised.value.message
    # In a batch params sit one level deeper; the refusal names the member at fault.
    batch = f"[{ping_with_params(2, request_id=1)},{ping_with_params(MAX_NESTING - 1)}]"
    with pytest.raises(InvalidParams) as raised:
        parse_body(batch.encode())
    assert raised.value.request_id == 7


def test_anything_else_nested_past_the_limit_is_invalid_request() -> None:
    """Too deep outside params (a member no method reads): -32600 for the whole body."""
    deep = nested(MAX_NESTING)
    raw = f'{{"jsonrpc":"2.0","id":1,"method":"ping","extra":{deep}}}'.encode()
    with pytest.raises(InvalidRequest) as raised:
        parse_body(raw)
    assert str(MAX_NESTING) in raised.value.message
    # One level less is read, the member ignored as before.
    parse_body(
        f'{{"jsonrpc":"2.0","id":1,"method":"ping","extra":{nested(MAX_NESTING - 1)}}}'.encode()
    )


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    """The byte count only decides whether to look; the walk reads the parsed value."""
    text = "[" * 500 + "{" * 500
    body = parse_body(
        orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"t": text}})
    )
    assert body.messages[0].params == {"t": text}
