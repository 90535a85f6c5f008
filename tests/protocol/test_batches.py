"""Batches of 1 to 20 and notifications (interface 2.9, 2.10, 4.2, 8)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from frontdesk.protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND
from tests.support.jsonrpc import ACME, JSON_HEADERS, assert_envelope, notification, request


def mixed_batch(size: int) -> list[dict[str, Any]]:
    """Requests with string and integer ids, alternating methods, each answer telling which."""
    batch = []
    for index in range(size):
        request_id: str | int = f"r{index}" if index % 2 else index * 10
        if index % 3 == 0:
            batch.append(request("ping", request_id=request_id))
        else:
            arguments = {"text": f"reply {index}"}
            batch.append(
                request("tools/call", {"name": "echo", "arguments": arguments}, request_id)
            )
    return batch


@pytest.mark.parametrize("size", [1, 2, 3, 7, 19, 20])
async def test_a_batch_is_answered_in_order_under_its_ids(
    client: httpx.AsyncClient, size: int
) -> None:
    """A batch of 1 to 20 gets one reply per request, in request order, under the same ids."""
    batch = mixed_batch(size)
    response = await client.post(ACME, json=batch)
    assert response.status_code == 200
    replies = response.json()
    assert isinstance(replies, list)
    assert [reply["id"] for reply in replies] == [item["id"] for item in batch]
    for index, (item, reply) in enumerate(zip(batch, replies, strict=True)):
        assert reply["jsonrpc"] == "2.0"
        if item["method"] == "ping":
            assert reply["result"] == {}
        else:
            assert reply["result"]["content"] == [{"type": "text", "text": f"reply {index}"}]


async def test_a_batch_of_one_is_answered_with_an_array(client: httpx.AsyncClient) -> None:
    """A batch reply is an array even when the batch holds one request."""
    response = await client.post(ACME, json=[request("ping", request_id=5)])
    assert response.status_code == 200
    assert response.json() == [{"jsonrpc": "2.0", "id": 5, "result": {}}]


async def test_an_empty_batch_is_refused_with_400(client: httpx.AsyncClient) -> None:
    """[] answers 400 with a JSON-RPC envelope."""
    response = await client.post(ACME, content=b"[]", headers=JSON_HEADERS)
    assert_envelope(response, 400, INVALID_REQUEST)


async def test_a_batch_of_21_is_refused_with_400(client: httpx.AsyncClient) -> None:
    """More than 20 requests in a batch answers 400 with a JSON-RPC envelope."""
    batch = [request("ping", request_id=index) for index in range(21)]
    response = await client.post(ACME, json=batch)
    envelope = assert_envelope(response, 400, INVALID_REQUEST)
    assert envelope["id"] is None


async def test_a_batch_of_21_notifications_is_refused_with_400(
    client: httpx.AsyncClient,
) -> None:
    """The 20 limit counts notifications too."""
    response = await client.post(ACME, json=[notification("notifications/x")] * 21)
    assert_envelope(response, 400, INVALID_REQUEST)


async def test_a_lone_notification_is_accepted_with_202_and_no_body(
    client: httpx.AsyncClient,
) -> None:
    """A body holding one notification answers 202 with an empty body."""
    response = await client.post(ACME, json=notification("notifications/initialized"))
    assert response.status_code == 202
    assert response.content == b""


async def test_a_batch_of_notifications_only_is_accepted_with_202_and_no_body(
    client: httpx.AsyncClient,
) -> None:
    """A batch of notifications only answers 202 with an empty body."""
    batch = [
        notification("notifications/initialized"),
        notification("notifications/cancelled", {"requestId": 1}),
        notification("notifications/unknown"),
    ]
    response = await client.post(ACME, json=batch)
    assert response.status_code == 202
    assert response.content == b""


async def test_a_mixed_batch_answers_only_its_requests(client: httpx.AsyncClient) -> None:
    """Notifications in a batch get no reply; the requests' replies keep their order."""
    batch = [
        notification("notifications/initialized"),
        request("ping", request_id="first"),
        notification("notifications/progress", {"progressToken": 1, "progress": 1}),
        request("tools/list", request_id=2),
        notification("notifications/initialized"),
    ]
    response = await client.post(ACME, json=batch)
    assert response.status_code == 200
    replies = response.json()
    assert [reply["id"] for reply in replies] == ["first", 2]
    assert replies[0]["result"] == {}
    assert "tools" in replies[1]["result"]


async def test_a_batch_with_one_request_and_notifications_is_answered_with_an_array(
    client: httpx.AsyncClient,
) -> None:
    """A batch whose only request sits among notifications is still answered with an array."""
    batch = [notification("notifications/initialized"), request("ping", request_id=9)]
    response = await client.post(ACME, json=batch)
    assert response.status_code == 200
    assert response.json() == [{"jsonrpc": "2.0", "id": 9, "result": {}}]


async def test_errors_in_a_batch_stay_in_their_own_reply(client: httpx.AsyncClient) -> None:
    """One request failing does not fail the batch: each reply carries its own outcome."""
    batch = [request("ping", request_id=1), request("nope", request_id=2), request("ping", None, 3)]
    response = await client.post(ACME, json=batch)
    assert response.status_code == 200
    replies = response.json()
    assert replies[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert replies[1]["error"]["code"] == METHOD_NOT_FOUND
    assert replies[2] == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_requests_sharing_an_id_each_get_a_reply(client: httpx.AsyncClient) -> None:
    """Duplicate ids are the client's affair: every request still gets its reply."""
    batch = [request("ping", request_id=1), request("ping", request_id=1)]
    response = await client.post(ACME, json=batch)
    assert response.json() == [{"jsonrpc": "2.0", "id": 1, "result": {}}] * 2


async def test_the_batch_reply_is_byte_for_byte_json(client: httpx.AsyncClient) -> None:
    """The reply body is one JSON array, parseable by any JSON reader."""
    response = await client.post(ACME, json=mixed_batch(4))
    assert isinstance(orjson.loads(response.content), list)
