"""JSON nested past ``json_nesting.MAX_NESTING`` on its way to or from a company's backend:
orjson reads 1,024 levels but writes 254, so without the limit such a value passed the
parser and broke later, in the call to the backend or in the reply (a traceback, an
internal error). Arguments are refused before the call; an answer is a plain tool error."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import orjson
import pytest
import structlog

from frontdesk.limits.json_nesting import MAX_NESTING
from frontdesk.protocol import tool_calls
from frontdesk.protocol.errors import INVALID_PARAMS
from frontdesk.tools import exchange
from frontdesk.tools import http as http_provider
from tests.tools.backends import (
    ScriptedBackend,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    reply_json,
)
from tests.tools.conftest import Serve, Served

pytestmark = pytest.mark.anyio

UNREADABLE = "lookup answered in a form Frontdesk cannot read."


def nested(levels: int) -> Any:
    """``levels`` arrays one inside the other, around a 0."""
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def deep_text(levels: int) -> bytes:
    return b"[" * levels + b"0" + b"]" * levels


@pytest.fixture
def own_loggers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loggers of their own for the provider and the tool runner: ones cached by an earlier
    test would bypass capture_logs (entered once the app is up: starting it configures
    logging anew)."""
    for module in (http_provider, exchange, tool_calls):
        monkeypatch.setattr(module, "log", structlog.get_logger(module.__name__))


def failures(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["log_level"] in ("error", "critical")]


async def lookup(serve: Serve, backend: ScriptedBackend) -> Served:
    """A company whose ``lookup`` tool (any arguments: no input schema) is the backend's."""
    return await serve(company("initrode", http_tool("lookup", backend.url("/tools"))))


async def test_arguments_nested_past_the_limit_never_reach_the_backend(
    serve: Serve, backend: ScriptedBackend, own_loggers: None
) -> None:
    """-32602 in a 400 with the request's id, the backend not called, nothing failed; at
    300 levels the call to the backend could not even be written."""
    backend.routes["/tools"] = reply_json({"text": "called"})
    served = await lookup(serve, backend)
    with structlog.testing.capture_logs() as logs:
        # The request, its params and arguments take 3 levels: "deep" one level past the rest.
        for levels in (MAX_NESTING - 2, 300):
            raw = (
                b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"lookup",'
                b'"arguments":{"deep":' + deep_text(levels) + b"}}}"
            )
            response = await served.client.post(
                "/v1/initrode/mcp", content=raw, headers={"content-type": "application/json"}
            )
            assert response.status_code == 400, response.text
            reply = response.json()
            assert reply["id"] == 5
            assert reply["error"]["code"] == INVALID_PARAMS
            assert f"{MAX_NESTING} levels" in reply["error"]["message"]
    assert backend.received == []
    assert failures(logs) == []


async def test_arguments_at_the_limit_reach_the_backend_whole(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """One level less is an ordinary call: the backend gets the arguments as sent."""
    backend.routes["/tools"] = reply_json({"text": "called"})
    served = await lookup(serve, backend)
    arguments = {"deep": nested(MAX_NESTING - 3)}
    result = await call_tool(served.client, "initrode", "lookup", arguments)
    assert result == {"content": [{"type": "text", "text": "called"}], "isError": False}
    [received] = backend.received
    assert orjson.loads(received.body)["arguments"] == arguments


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"structuredContent": {"deep": nested(300)}}, id="structured-only"),
        pytest.param(
            {"content": [{"type": "text", "text": "x"}], "structuredContent": {"d": nested(300)}},
            id="structured-and-content",
        ),
        pytest.param(
            {"content": [{"type": "text", "text": "x", "_meta": {"d": nested(MAX_NESTING - 3)}}]},
            id="content-just-past-the-limit",
        ),
    ],
)
async def test_an_answer_nested_past_the_limit_is_a_plain_error(
    serve: Serve, backend: ScriptedBackend, own_loggers: None, answer: Any
) -> None:
    """Refused as unreadable and logged as a warning, with no traceback: before the limit,
    such an answer broke the reply (an internal error) or the provider (a traceback)."""
    # reply_json writes with json, as deep as Python's stack allows.
    backend.routes["/tools"] = reply_json(answer)
    served = await lookup(serve, backend)
    with structlog.testing.capture_logs() as logs:
        result = await call_tool(served.client, "initrode", "lookup")
    assert_plain_error(result, UNREADABLE, backend)
    malformed = [entry for entry in logs if entry["event"] == "tool_backend_malformed"]
    assert len(malformed) == 1
    assert f"{MAX_NESTING} levels" in malformed[0]["error"]
    assert failures(logs) == []


async def test_an_answer_at_the_limit_passes_through(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The answer's own object and structuredContent take 2 levels, "deep" the rest."""
    structured = {"deep": nested(MAX_NESTING - 2)}
    backend.routes["/tools"] = reply_json({"structuredContent": structured})
    served = await lookup(serve, backend)
    result = await call_tool(served.client, "initrode", "lookup")
    assert result["isError"] is False
    assert result["structuredContent"] == structured
