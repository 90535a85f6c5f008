"""The few raw-ASGI helpers the hot path uses instead of a framework's request objects."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_CONTENT = (b"content-type", b"application/json")
_HEADER_INDEX = "frontdesk.headers"


class BodyTooLargeError(Exception):
    """The body grew past the limit while it was read."""


class ClientDisconnectedError(Exception):
    """The client went away before its body arrived."""


def headers_of(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers by lower-case name, each with its first value, as ASGI hands
    them over.

    Indexed once per request and kept in the scope, since the hot path asks for several.
    """
    index: dict[bytes, bytes] | None = scope.get(_HEADER_INDEX)
    if index is None:
        # Reversed, so that the first of repeated headers is the one kept.
        index = scope[_HEADER_INDEX] = dict(reversed(scope["headers"]))
    return index


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of one header (lower-case name)."""
    return headers_of(scope).get(name)


def whole_body(message: Message, limit: int) -> bytes | None:
    """The body, when ``message`` (the first one received) carries all of it; None when
    there is more to read (``read_body``). Raises BodyTooLargeError past ``limit``."""
    if message["type"] != "http.request" or message.get("more_body", False):
        return None
    body: bytes = message.get("body", b"")
    if len(body) > limit:
        raise BodyTooLargeError
    return body


async def read_body(receive: Receive, limit: int, first: Message | None = None) -> bytes:
    """Read the body in chunks, refusing as soon as it passes ``limit`` bytes; ``first``
    is its first message when the caller has already received that."""
    chunks: list[bytes] = []
    size = 0
    message = first
    while True:
        if message is None:
            message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnectedError
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        message = None


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    raw_headers = [*headers]
    if body:
        raw_headers.append((b"content-length", str(len(body)).encode()))
    else:
        raw_headers.append((b"content-length", b"0"))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})
