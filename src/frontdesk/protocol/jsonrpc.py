"""JSON-RPC 2.0 framing: the request shapes (interface 2.9) and reply envelopes (2.10)."""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from frontdesk.config import MAX_BATCH
from frontdesk.limits.json_nesting import MAX_NESTING, may_nest_deeper, nests_deeper
from frontdesk.protocol.errors import InvalidParams, InvalidRequest, ParseError, RpcError

RequestId = str | int
# An integer id is what orjson reads as one, a signed or unsigned 64-bit integer; RFC 8259
# 6 lets an implementation limit the numbers it accepts (openapi.yaml states the range). A
# float is an integer id below this magnitude: an integer written outside the range is
# read as a float too, and one just past -2**63 rounds to it.
FLOAT_ID_BOUND = 2.0**63
# A method's result: an object, or one rendered to JSON ahead of time (a company's
# listings, rendered when it is loaded) that orjson copies into the reply as it stands.
Result = dict[str, Any] | orjson.Fragment


# The parse results are tuples: as immutable as frozen dataclasses, at half the cost to
# build (a frozen dataclass sets each field through object.__setattr__), which every
# request pays.
class Message(NamedTuple):
    """One JSON-RPC request or notification, already checked against the contract."""

    method: str
    params: dict[str, Any]
    id: RequestId | None
    is_notification: bool


class Body(NamedTuple):
    messages: list[Message]
    is_batch: bool


def parse_body(body: bytes) -> Body:
    """Read a POST body; any breach of the contract's shape raises (400 in the endpoint)."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ParseError("Parse error: the body is not valid JSON") from None
    if isinstance(document, list):
        if not document:
            raise InvalidRequest("Invalid request: a batch needs at least one request")
        if len(document) > MAX_BATCH:
            raise InvalidRequest(f"Invalid request: a batch holds at most {MAX_BATCH} requests")
        parsed = Body([_parse_message(item) for item in document], True)
    else:
        parsed = Body([_parse_message(document)], False)
    # Costs two byte counts on the usual body; a walk only for one that could be too deep.
    if may_nest_deeper(body) and nests_deeper(document):
        _refuse_nesting(parsed)
    return parsed


def _refuse_nesting(body: Body) -> None:
    """Refuse a body nested past ``MAX_NESTING``, before any of it runs: -32602 with the
    request's id when a request's params go too deep, -32600 when anything else does."""
    # params sit one level below their message, which sits one below a batch.
    params_limit = MAX_NESTING - (2 if body.is_batch else 1)
    for message in body.messages:
        if nests_deeper(message.params, params_limit):
            raise InvalidParams(
                f"Invalid params: JSON nested more than {MAX_NESTING} levels deep",
                request_id=message.id,
            )
    raise InvalidRequest(f"Invalid request: JSON nested more than {MAX_NESTING} levels deep")


def _parse_message(item: object) -> Message:
    if not isinstance(item, dict):
        raise InvalidRequest("Invalid request: each request must be a JSON object")
    request_id = item.get("id")
    has_id = "id" in item
    # bool is an int in Python but never a JSON-RPC id.
    if has_id and (type(request_id) is not int and type(request_id) is not str):
        request_id = _integral_id(request_id)
    valid_id = request_id if has_id else None
    if item.get("jsonrpc") != "2.0":
        raise InvalidRequest('Invalid request: jsonrpc must be "2.0"', request_id=valid_id)
    method = item.get("method")
    if type(method) is not str or not method:
        raise InvalidRequest("Invalid request: method must be a string", request_id=valid_id)
    params = item.get("params", {})
    if type(params) is not dict:
        raise InvalidRequest("Invalid request: params must be an object", request_id=valid_id)
    return Message(method, params, valid_id, not has_id)


def _integral_id(value: object) -> int:
    """An id orjson read as a float that is an integer all the same ("7.0", "1e3"; JSON
    Schema's ``integer``, which the document names): the same id, as an int."""
    if type(value) is float and value.is_integer() and -FLOAT_ID_BOUND < value < FLOAT_ID_BOUND:
        return int(value)
    raise InvalidRequest("Invalid request: id must be a string or an integer")


def success(request_id: RequestId | None, result: Result) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def failure(request_id: RequestId | None, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_error_object()}
