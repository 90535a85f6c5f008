"""The body deadline's layer (frontdesk.body_deadline) around an application: an answer
given before the body was read whole closes the connection, one given after keeps it."""

from __future__ import annotations

from typing import Any

from frontdesk.asgi import Message, Receive, Scope, Send
from frontdesk.body_deadline import BodyDeadline

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def scope() -> Scope:
    return {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-length", str(len(BODY)).encode())],
    }


async def answer_with(app: Any) -> list[Message]:
    sent: list[Message] = []
    parts = [{"type": "http.request", "body": BODY, "more_body": False}]

    async def receive() -> Message:
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await BodyDeadline(app, 5.0)(scope(), receive, send)
    return sent


async def respond(send: Send) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def test_an_answer_before_the_body_was_read_closes_the_connection() -> None:
    """The rest of the body may still be on its way: the client is told not to reuse it."""

    async def refuses_at_once(_scope: Scope, _receive: Receive, send: Send) -> None:
        await respond(send)

    [start, _body] = await answer_with(refuses_at_once)
    assert (b"connection", b"close") in start["headers"]


async def test_an_answer_after_the_body_keeps_the_connection() -> None:
    async def reads_then_answers(_scope: Scope, receive: Receive, send: Send) -> None:
        assert (await receive())["body"] == BODY
        await respond(send)

    [start, _body] = await answer_with(reads_then_answers)
    assert (b"connection", b"close") not in start["headers"]
