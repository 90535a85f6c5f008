"""How a backend's answer becomes the caller's tool result: MCP results passed through, and
every other answer (status, shape, size, silence, no backend at all) an isError result with
a plain message, never a failed MCP request (tools/http.py)."""

from __future__ import annotations

import gzip
import json
import socket
import time
import tracemalloc
import zlib

import pytest

from frontdesk.tools.exchange import MAX_RESPONSE_BYTES
from tests.tools.backends import (
    Handler,
    Json,
    Responder,
    ScriptedBackend,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    reply_after_release,
    reply_chunked,
    reply_declared_oversize,
    reply_endless_stream,
    reply_json,
    reply_raw,
    reply_redirect,
    reply_status,
    text_of,
)
from tests.tools.conftest import Serve

pytestmark = pytest.mark.anyio

UNREADABLE = "lookup answered in a form Frontdesk cannot read."
OVERSIZED = "lookup answered with more than Frontdesk accepts."
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)


async def answer_of(
    serve: Serve, backend: ScriptedBackend, tool_timeout: float | None = None
) -> Json:
    """The result of calling a tool answered by ``backend`` at /tools."""
    served = await serve(
        company("initrode", http_tool("lookup", backend.url("/tools"), timeout=tool_timeout))
    )
    return await call_tool(served.client, "initrode", "lookup")


# Results passed through ------------------------------------------------------------------


async def test_content_blocks_pass_through_unchanged(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Text, image, audio, resource-link and embedded-resource blocks reach the caller as the
    backend wrote them."""
    content = [
        {"type": "text", "text": "Your anvil ships Monday."},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "initrode://orders/A-1", "name": "order A-1"},
        {
            "type": "resource",
            "resource": {"uri": "initrode://orders/A-1", "mimeType": "text/plain", "text": "A-1"},
        },
        {"type": "resource", "resource": {"uri": "initrode://label.pdf", "blob": "JVBERg=="}},
    ]
    backend.routes["/tools"] = reply_json({"content": content})
    assert await answer_of(serve, backend) == {"content": content, "isError": False}


async def test_the_text_shorthand_becomes_one_text_block(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """{"text": ...} is answered as a single text content block."""
    backend.routes["/tools"] = reply_json({"text": "Hello, Ada."})
    assert await answer_of(serve, backend) == {
        "content": [{"type": "text", "text": "Hello, Ada."}],
        "isError": False,
    }


async def test_structured_content_alone_is_echoed_as_json_text(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """structuredContent is kept, and its JSON is the text for clients that read only text."""
    structured = {"points": 1200, "tier": "silver", "tags": ["ünï", None]}
    backend.routes["/tools"] = reply_json({"structuredContent": structured})
    result = await answer_of(serve, backend)
    assert result["structuredContent"] == structured
    assert result["isError"] is False
    [block] = result["content"]
    assert block["type"] == "text"
    assert json.loads(block["text"]) == structured


async def test_structured_content_with_content_keeps_both_as_sent(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """A backend that writes its own text beside structuredContent gets no JSON echo."""
    document = {
        "content": [{"type": "text", "text": "1200 points"}],
        "structuredContent": {"points": 1200},
    }
    backend.routes["/tools"] = reply_json(document)
    assert await answer_of(serve, backend) == {**document, "isError": False}


async def test_an_is_error_answer_passes_through(serve: Serve, backend: ScriptedBackend) -> None:
    """isError true from the backend is the caller's isError, with the backend's message."""
    message = "No order A-9 on your account."
    backend.routes["/tools"] = reply_json({"text": message, "isError": True})
    assert await answer_of(serve, backend) == {
        "content": [{"type": "text", "text": "No order A-9 on your account."}],
        "isError": True,
    }


async def test_an_answer_of_exactly_the_cap_is_accepted(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """1 MiB to the byte is still read, declared or chunked."""
    padding = MAX_RESPONSE_BYTES - len(b'{"text":""}')
    body = json.dumps({"text": "a" * padding}, separators=(",", ":")).encode()
    assert len(body) == MAX_RESPONSE_BYTES
    backend.routes["/declared"] = reply_raw(body)
    backend.routes["/chunked"] = reply_chunked(body)
    served = await serve(
        company(
            "initrode",
            http_tool("declared", backend.url("/declared")),
            http_tool("chunked", backend.url("/chunked")),
        )
    )
    for name in ("declared", "chunked"):
        result = await call_tool(served.client, "initrode", name)
        text = text_of(result)
        # Not the whole result in a failure report: it is a megabyte.
        is_error, length = result["isError"], len(text)
        assert is_error is False, text[:200]
        assert length == padding


# Answers refused ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [201, 204])
async def test_another_2xx_status_is_read_like_200(
    serve: Serve, backend: ScriptedBackend, status: int
) -> None:
    """Any 2xx carries a result; an empty 204 is simply unreadable."""
    backend.routes["/tools"] = (
        reply_raw(b"", status) if status == 204 else reply_json({"text": "made"}, status)
    )
    result = await answer_of(serve, backend)
    if status == 204:
        assert_plain_error(result, UNREADABLE, backend)
    else:
        assert result == {"content": [{"type": "text", "text": "made"}], "isError": False}


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 429, 500, 502, 503])
async def test_a_non_2xx_status_is_an_error_naming_the_status(
    serve: Serve, backend: ScriptedBackend, status: int
) -> None:
    """The caller learns the status, never the backend's error body."""
    backend.routes["/tools"] = reply_status(status)
    result = await answer_of(serve, backend)
    assert_plain_error(result, f"lookup failed (its service answered HTTP {status}).", backend)


async def test_a_redirect_is_not_followed(serve: Serve, backend: ScriptedBackend) -> None:
    """A 302 is an error: Frontdesk never follows a backend elsewhere."""
    backend.routes["/tools"] = reply_redirect(backend.url("/elsewhere"))
    backend.routes["/elsewhere"] = reply_json({"text": "followed"})
    result = await answer_of(serve, backend)
    assert_plain_error(result, "lookup failed (its service answered HTTP 302).", backend)
    assert [request.path for request in backend.received] == ["/tools"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"<html>Internal Server Error</html>", id="html"),
        pytest.param(b'{"text": "cut short', id="truncated"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
        pytest.param(b"[]", id="array"),
        pytest.param(b'"text"', id="string"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"text": 5}', id="text-not-string"),
        pytest.param(b'{"content": "hello"}', id="content-not-list"),
        pytest.param(b'{"content": [{"type": "text"}]}', id="text-block-without-text"),
        pytest.param(b'{"content": [{"type": "video", "url": "x"}]}', id="unknown-block"),
        pytest.param(b'{"content": ["hello"]}', id="block-not-object"),
        pytest.param(b'{"content": [{"type": "image", "data": "AA=="}]}', id="image-no-mime"),
        pytest.param(b'{"content": [{"type": "audio", "mimeType": "audio/wav"}]}', id="no-data"),
        pytest.param(b'{"content": [{"type": "resource_link", "uri": "x:1"}]}', id="link-no-name"),
        pytest.param(b'{"content": [{"type": "resource", "resource": {"uri": "x"}}]}', id="bare"),
        pytest.param(b'{"content": [{"type": "resource", "resource": "x:1"}]}', id="res-str"),
        pytest.param(b'{"structuredContent": [1, 2]}', id="structured-not-object"),
        pytest.param(b'{"text": "ok", "isError": "yes"}', id="is-error-not-boolean"),
    ],
)
async def test_an_answer_of_another_shape_is_an_error(
    serve: Serve, backend: ScriptedBackend, body: bytes
) -> None:
    """Malformed JSON, or JSON that is not an MCP tool result, is refused plainly."""
    backend.routes["/tools"] = reply_raw(body)
    assert_plain_error(await answer_of(serve, backend), UNREADABLE, backend)


async def test_an_answer_over_the_cap_is_refused_whole(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """One byte over 1 MiB is too much, with its length declared or chunked."""
    body = json.dumps({"text": "a" * MAX_RESPONSE_BYTES}).encode()
    backend.routes["/declared"] = reply_raw(body)
    backend.routes["/chunked"] = reply_chunked(body)
    served = await serve(
        company(
            "initrode",
            http_tool("declared", backend.url("/declared")),
            http_tool("chunked", backend.url("/chunked")),
        )
    )
    for name in ("declared", "chunked"):
        result = await call_tool(served.client, "initrode", name)
        assert_plain_error(result, f"{name} answered with more than Frontdesk accepts.", backend)


async def test_a_declared_oversize_answer_is_refused_before_its_body_arrives(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """A Content-Length over the cap is refused at once, not read (the body never comes)."""
    backend.routes["/tools"] = reply_declared_oversize
    started = time.monotonic()
    result = await answer_of(serve, backend, tool_timeout=20)
    assert_plain_error(result, OVERSIZED, backend)
    assert time.monotonic() - started < 10


async def test_an_endless_stream_is_cut_off_at_the_cap(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """A chunked answer that never ends is refused once it passes 1 MiB, not read forever."""
    backend.routes["/tools"] = reply_endless_stream
    started = time.monotonic()
    result = await answer_of(serve, backend, tool_timeout=20)
    assert_plain_error(result, OVERSIZED, backend)
    assert time.monotonic() - started < 10


# Compressed answers ------------------------------------------------------------------------


def reply_encoded(body: bytes, coding: str) -> Responder:
    """``body`` sent as it is, labelled with Content-Encoding ``coding``."""

    def respond(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-encoding", coding)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return respond


def gzip_bomb(inflated_bytes: int) -> bytes:
    """``inflated_bytes`` of JSON-looking zeros gzipped (about 1000:1), built piecewise so the
    test itself never holds the inflated form."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [deflater.compress(b'{"text": "')]
    piece = b"0" * (1024 * 1024)
    parts += [deflater.compress(piece) for _ in range(inflated_bytes // len(piece))]
    parts.append(deflater.flush())
    return b"".join(parts)


async def test_a_gzip_answer_is_asked_for_and_decoded(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Frontdesk asks for gzip only, and reads a gzip answer as the JSON it holds."""
    backend.routes["/tools"] = reply_encoded(gzip.compress(b'{"text": "squeezed"}'), "gzip")
    result = await answer_of(serve, backend)
    assert result == {"content": [{"type": "text", "text": "squeezed"}], "isError": False}
    assert backend.received[0].headers["accept-encoding"] == "gzip"


async def test_a_gzip_bomb_is_refused_without_being_inflated(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """100 MB of zeros in a 100 KB gzip answer is over the cap once decoded: refused quickly,
    decoding stops one byte past 1 MiB, and memory never holds more than a few MiB of it."""
    bomb = gzip_bomb(100 * 1024 * 1024)
    assert len(bomb) < MAX_RESPONSE_BYTES
    backend.routes["/tools"] = reply_encoded(bomb, "gzip")
    tracemalloc.start()
    try:
        started = time.monotonic()
        result = await answer_of(serve, backend, tool_timeout=20)
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_plain_error(result, OVERSIZED, backend)
    assert elapsed < 10
    assert peak < 20 * 1024 * 1024


@pytest.mark.parametrize(
    ("body", "coding"),
    [
        pytest.param(zlib.compress(b'{"text": "x"}'), "deflate", id="deflate-not-asked-for"),
        pytest.param(b'{"text": "x"}', "br", id="brotli-not-asked-for"),
        pytest.param(gzip.compress(gzip.compress(b'{"text": "x"}')), "gzip, gzip", id="twice"),
        pytest.param(gzip.compress(b'{"text": "x"}')[:-12], "gzip", id="gzip-cut-short"),
        pytest.param(b"not gzip at all", "gzip", id="gzip-corrupt"),
    ],
)
async def test_an_answer_in_a_coding_frontdesk_cannot_decode_is_an_error(
    serve: Serve, backend: ScriptedBackend, body: bytes, coding: str
) -> None:
    """A coding other than the gzip asked for, or a broken gzip body, is refused plainly."""
    backend.routes["/tools"] = reply_encoded(body, coding)
    assert_plain_error(await answer_of(serve, backend), UNREADABLE, backend)


# No answer ---------------------------------------------------------------------------------


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_unreachable_backend_is_an_error(serve: Serve) -> None:
    """Connection refused is a plain 'could not reach' result, without the address."""
    port = closed_port()
    served = await serve(
        company("initrode", http_tool("lookup", f"http://127.0.0.1:{port}/tools", timeout=10))
    )
    result = await call_tool(served.client, "initrode", "lookup")
    assert_plain_error(result, "lookup could not reach its service; try again later.")
    assert str(port) not in result["content"][0]["text"]


async def test_a_backend_slower_than_the_tool_timeout_is_an_error_within_the_timeout(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The tool's own timeout bounds the call; the caller is told it did not answer."""
    backend.routes["/tools"] = reply_after_release(reply_json({"text": "too late"}))
    started = time.monotonic()
    result = await answer_of(serve, backend, tool_timeout=0.5)
    elapsed = time.monotonic() - started
    assert_plain_error(result, "lookup did not answer within 0.5 seconds.", backend)
    assert 0.5 <= elapsed < 2.5
    assert len(backend.received) == 1


async def test_a_failed_call_does_not_spoil_the_next_one(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """After a timeout or an oversized answer, the next call to the same backend succeeds."""
    backend.routes["/slow"] = reply_after_release(reply_json({"text": "late"}))
    backend.routes["/big"] = reply_endless_stream
    backend.routes["/ok"] = reply_json({"text": "fine"})
    served = await serve(
        company(
            "initrode",
            http_tool("slow", backend.url("/slow"), timeout=0.3),
            http_tool("big", backend.url("/big")),
            http_tool("fine", backend.url("/ok")),
        )
    )
    assert (await call_tool(served.client, "initrode", "slow"))["isError"] is True
    assert (await call_tool(served.client, "initrode", "big"))["isError"] is True
    assert await call_tool(served.client, "initrode", "fine") == {
        "content": [{"type": "text", "text": "fine"}],
        "isError": False,
    }
