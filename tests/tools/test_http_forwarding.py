"""What Frontdesk sends a company's backend: the signed POST of one tool call, the customer in
it, and the secret it is signed with (tools/http.py, tools/signature.py)."""

from __future__ import annotations

import re
import time

import pytest
from examples import backend as example

from frontdesk.tools import signature
from tests.oauth import flows
from tests.tools.backends import (
    SECRET,
    ScriptedBackend,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    post_mcp,
    reply_json,
    rpc_call,
    text_of,
)
from tests.tools.conftest import Serve

pytestmark = pytest.mark.anyio

CALL_ID = re.compile(r"^[0-9a-f]{24}$")


def ok(backend: ScriptedBackend, path: str = "/tools") -> str:
    """Route ``path`` to a plain answer; the backend's URL for it."""
    backend.routes[path] = reply_json({"text": "done"})
    return backend.url(path)


async def test_a_guest_call_is_posted_with_a_null_customer(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The body holds tenant, tool, arguments, customer null, the request id, a call id, and
    (from a 2025 client, which cannot be asked anything) no input methods nor answers."""
    served = await serve(company("initrode", http_tool("lookup", ok(backend))))
    result = await call_tool(
        served.client, "initrode", "lookup", {"order": "A-1", "n": [1, 2]}, request_id="req-42"
    )
    assert result == {"content": [{"type": "text", "text": "done"}], "isError": False}
    [received] = backend.received
    assert received.method == "POST"
    assert received.path == "/tools"
    body = received.json()
    assert CALL_ID.match(body.pop("call_id"))
    assert body == {
        "tenant": "initrode",
        "tool": "lookup",
        "arguments": {"order": "A-1", "n": [1, 2]},
        "customer": None,
        "request_id": "req-42",
        "input_methods": [],
        "input_responses": None,
        "request_state": None,
    }
    assert received.headers["content-type"] == "application/json"
    assert received.headers["frontdesk-request-id"] == "req-42"


async def test_a_signed_in_call_carries_the_customer(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """subject, email (unverified: anyone may type one into the dev login), name and the
    sorted scopes of the customer reach the backend."""
    served = await serve(
        company("initrode", http_tool("points", ok(backend), access="personal"), signin=True)
    )
    tokens = await flows.obtain_tokens(
        served.client, "initrode", email="Ada@Initrode.example", name="Ada L"
    )
    result = await call_tool(served.client, "initrode", "points", token=tokens.access)
    assert result["isError"] is False
    [received] = backend.received
    assert received.json()["customer"] == {
        "subject": "dev:ada@initrode.example",
        "email": "Ada@Initrode.example",
        "email_verified": False,
        "name": "Ada L",
        "scopes": ["email", "profile"],
    }


async def test_a_customer_without_the_email_scope_reaches_the_backend_without_an_email(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """What the customer did not grant is null in the forwarded call, not filled in."""
    served = await serve(
        company("initrode", http_tool("points", ok(backend), access="personal"), signin=True)
    )
    tokens = await flows.obtain_tokens(served.client, "initrode", scope="profile", name="Ada L")
    await call_tool(served.client, "initrode", "points", token=tokens.access)
    customer = backend.received[0].json()["customer"]
    assert customer["email"] is None
    assert customer["name"] == "Ada L"
    assert customer["scopes"] == ["profile"]


async def test_the_signature_verifies_over_the_exact_body(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Frontdesk's headers pass signature.verify and the example backend's own check."""
    served = await serve(company("initrode", http_tool("lookup", ok(backend))))
    await call_tool(served.client, "initrode", "lookup", {"q": "ünïcode"})
    [received] = backend.received
    timestamp = received.headers["frontdesk-timestamp"]
    given = received.headers["frontdesk-signature"]
    now = time.time()
    assert given.startswith("v1=")
    assert abs(now - int(timestamp)) < 60
    assert signature.verify(SECRET, timestamp, received.body, given, now)
    assert example.signature_is_valid(SECRET.encode(), timestamp, received.body, given, now)


async def test_a_changed_body_or_another_secret_fails_the_signature(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """One byte more, or the wrong key, and neither check accepts the signature."""
    served = await serve(company("initrode", http_tool("lookup", ok(backend))))
    await call_tool(served.client, "initrode", "lookup")
    [received] = backend.received
    timestamp = received.headers["frontdesk-timestamp"]
    given = received.headers["frontdesk-signature"]
    now = time.time()
    tampered = received.body.replace(b'"lookup"', b'"lookup2"')
    assert not signature.verify(SECRET, timestamp, tampered, given, now)
    assert not example.signature_is_valid(SECRET.encode(), timestamp, tampered, given, now)
    assert not signature.verify("another-secret-0123456789", timestamp, received.body, given, now)
    other = b"another-secret-0123"
    assert not example.signature_is_valid(other, timestamp, received.body, given, now)


async def test_a_signature_is_refused_outside_the_tolerance_window(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The same signature checked 301 s later (or earlier) is stale for both checks."""
    served = await serve(company("initrode", http_tool("lookup", ok(backend))))
    await call_tool(served.client, "initrode", "lookup")
    [received] = backend.received
    timestamp = received.headers["frontdesk-timestamp"]
    given = received.headers["frontdesk-signature"]
    for now in (int(timestamp) + 301, int(timestamp) - 301):
        assert not signature.verify(SECRET, timestamp, received.body, given, now)
        assert not example.signature_is_valid(SECRET.encode(), timestamp, received.body, given, now)
    assert signature.verify(SECRET, timestamp, received.body, given, int(timestamp) + 300)


async def test_identical_calls_in_one_batch_are_signed_differently(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Two equal calls in one batch share the request id but not the call id or signature,
    so a backend that refuses replays still answers both."""
    served = await serve(company("initrode", http_tool("lookup", ok(backend))))
    response = await post_mcp(
        served.client,
        "initrode",
        [rpc_call("lookup", {"a": 1}, 1), rpc_call("lookup", {"a": 1}, 2)],
        request_id="batch-1",
    )
    assert response.status_code == 200, response.text
    assert [reply["result"]["isError"] for reply in response.json()] == [False, False]
    first, second = backend.received
    assert first.json()["request_id"] == second.json()["request_id"] == "batch-1"
    assert first.json()["call_id"] != second.json()["call_id"]
    assert first.headers["frontdesk-signature"] != second.headers["frontdesk-signature"]


async def test_the_secret_is_read_from_the_named_environment_variable(
    serve: Serve, backend: ScriptedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With secret_env, calls are signed with that variable's value."""
    from_env = "secret-from-the-environment-0123456789"
    monkeypatch.setenv("INITRODE_BACKEND_SECRET", from_env)
    tool = http_tool("lookup", ok(backend), secret_env="INITRODE_BACKEND_SECRET")
    served = await serve(company("initrode", tool))
    await call_tool(served.client, "initrode", "lookup")
    [received] = backend.received
    headers = received.headers
    timestamp, given = headers["frontdesk-timestamp"], headers["frontdesk-signature"]
    assert signature.verify(from_env, timestamp, received.body, given, time.time())
    assert not signature.verify(SECRET, timestamp, received.body, given, time.time())


async def test_a_tool_whose_secret_variable_is_unset_is_listed_but_unavailable(
    serve: Serve, backend: ScriptedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The company meant to offer it, so it is listed; a call says it is unavailable and
    nothing is sent unsigned."""
    monkeypatch.delenv("INITRODE_BACKEND_SECRET", raising=False)
    tool = http_tool("lookup", ok(backend), secret_env="INITRODE_BACKEND_SECRET")
    served = await serve(company("initrode", tool))
    listing = await post_mcp(
        served.client, "initrode", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )
    assert [tool["name"] for tool in listing.json()["result"]["tools"]] == ["lookup"]
    result = await call_tool(served.client, "initrode", "lookup")
    assert_plain_error(result, "lookup is unavailable right now.", backend)
    assert "INITRODE_BACKEND_SECRET" not in text_of(result)
    assert backend.received == []
    assert backend.connections == 0
