"""examples/backend.py, the company backend operators copy: run as its own process, it
accepts exactly Frontdesk's signed calls and answers the demo company's loyalty_points."""

from __future__ import annotations

import ast
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from examples import backend as example
from jsonschema import Draft202012Validator

from frontdesk.companies.files import read_companies_file
from frontdesk.companies.seed import DEMO_FILE
from frontdesk.tools import signature
from tests.oauth import flows
from tests.tools.backends import (
    Json,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    post_mcp,
    rpc_call,
)
from tests.tools.conftest import EXAMPLE, ExampleBackend, Serve

ADA: Json = {
    "subject": "dev:ada@initrode.example",
    "email": "ada@initrode.example",
    "name": "Ada",
    "scopes": ["email", "profile"],
}


def call_body(customer: Json | None = ADA, tool: str = "loyalty_points") -> bytes:
    return json.dumps(
        {
            "tenant": "demo",
            "tool": tool,
            "arguments": {},
            "customer": customer,
            "request_id": "req-1",
            "call_id": str(time.monotonic_ns()),
        }
    ).encode()


def post(
    url: str,
    body: bytes,
    secret: str,
    *,
    timestamp: int | None = None,
    sent: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """POST ``sent`` (default ``body``) signed over ``body`` at ``timestamp`` (default now)."""
    signed = signature.headers(
        secret, int(time.time()) if timestamp is None else timestamp, body, "req-1"
    )
    if headers is not None:
        signed = headers
    return httpx.post(url, content=body if sent is None else sent, headers=signed, timeout=10)


# The backend alone ----------------------------------------------------------------------------


def test_the_example_needs_nothing_but_the_standard_library() -> None:
    """It must read and run without Frontdesk installed: stdlib imports only."""
    tree = ast.parse(Path(EXAMPLE).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            imported.add(node.module.split(".")[0])
    assert imported - {"__future__"} <= set(sys.stdlib_module_names), imported


def test_a_signed_call_is_answered_with_the_customers_points(
    example_backend: ExampleBackend,
) -> None:
    """A correctly signed call gets 200 and the signed-in customer's points."""
    response = post(example_backend.url, call_body(), example_backend.secret)
    assert response.status_code == 200, response.text
    structured = response.json()["structuredContent"]
    assert structured == example.loyalty_points({}, ADA, {})["structuredContent"]
    assert structured["customer"] == ADA["subject"]
    assert structured["tier"] in ("bronze", "silver", "gold")


def test_a_guest_call_is_answered_with_an_error_result(example_backend: ExampleBackend) -> None:
    """customer null: a 200 whose result says to sign in, marked isError."""
    response = post(example_backend.url, call_body(customer=None), example_backend.secret)
    assert response.status_code == 200, response.text
    assert response.json() == {"text": "Sign in to see your loyalty points.", "isError": True}


def test_a_tampered_body_is_refused(example_backend: ExampleBackend) -> None:
    """A body other than the one signed is 401."""
    body = call_body()
    tampered = body.replace(b'"Ada"', b'"Eve"')
    response = post(example_backend.url, body, example_backend.secret, sent=tampered)
    assert response.status_code == 401


# Two seconds past the 300 s window on either side: the timestamp is whole seconds and the
# backend reads a fractional clock, so a one-second margin could land inside the window.
@pytest.mark.parametrize("skew", [-302, 302, -3600])
def test_a_timestamp_outside_five_minutes_is_refused(
    example_backend: ExampleBackend, skew: int
) -> None:
    """A correctly signed call with a stale or future timestamp is 401."""
    timestamp = int(time.time()) + skew
    response = post(example_backend.url, call_body(), example_backend.secret, timestamp=timestamp)
    assert response.status_code == 401


def test_a_replayed_call_is_refused(example_backend: ExampleBackend) -> None:
    """The same signed request twice: accepted once, then 401."""
    body = call_body()
    headers = signature.headers(example_backend.secret, int(time.time()), body, "req-1")
    first = post(example_backend.url, body, example_backend.secret, headers=headers)
    again = post(example_backend.url, body, example_backend.secret, headers=headers)
    assert first.status_code == 200, first.text
    assert again.status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-headers"),
        pytest.param({"frontdesk-timestamp": "1"}, id="no-signature"),
        pytest.param({"frontdesk-signature": "v1=00"}, id="no-timestamp"),
        pytest.param({"frontdesk-timestamp": "soon", "frontdesk-signature": "v1=00"}, id="junk"),
    ],
)
def test_a_call_without_a_valid_signature_is_refused(
    example_backend: ExampleBackend, headers: dict[str, str]
) -> None:
    """Missing or unreadable signature headers are 401."""
    response = post(example_backend.url, call_body(), example_backend.secret, headers=headers)
    assert response.status_code == 401


def test_a_signature_header_with_bytes_beyond_ascii_is_refused_not_dropped(
    example_backend: ExampleBackend,
) -> None:
    """A signature that is not ASCII gets a 401, not a dropped connection."""
    response = httpx.post(
        example_backend.url,
        content=call_body(),
        headers={
            b"frontdesk-timestamp": str(int(time.time())).encode(),
            b"frontdesk-signature": "v1=\u00e9\u00e9".encode(),
        },
        timeout=10,
    )
    assert response.status_code == 401


def test_a_call_signed_with_another_secret_is_refused(example_backend: ExampleBackend) -> None:
    """Only the shared secret signs acceptably."""
    response = post(example_backend.url, call_body(), "some-other-secret-0123456789")
    assert response.status_code == 401


def test_an_unknown_tool_is_not_found(example_backend: ExampleBackend) -> None:
    """A signed call for a tool the backend does not serve is 404."""
    body = call_body(tool="launch_rockets")
    response = post(example_backend.url, body, example_backend.secret)
    assert response.status_code == 404


def test_the_answer_fits_the_demo_tools_declared_output_schema() -> None:
    """The demo company's loyalty_points points at the example and declares what it answers."""
    [demo] = read_companies_file(DEMO_FILE).companies
    tool = next(tool for tool in demo.tools if tool.name == "loyalty_points")
    dumped: dict[str, Any] = tool.provider.model_dump()
    assert dumped["url"] == "http://127.0.0.1:8001/tools"
    assert dumped["secret_env"] == example.SECRET_ENV
    assert tool.access == "personal"
    assert tool.output_schema is not None
    validator = Draft202012Validator(tool.output_schema)
    for subject in ("dev:ada@example.com", "oidc:1234", "dev:zoe@example.com"):
        answer = example.loyalty_points({}, {**ADA, "subject": subject}, {})
        assert list(validator.iter_errors(answer["structuredContent"])) == []


def test_the_demo_cancel_order_asks_then_answers_as_declared() -> None:
    """The demo company's cancel_order points at the example; its question is an
    elicitation and both outcomes fit the declared output schema."""
    [demo] = read_companies_file(DEMO_FILE).companies
    tool = next(tool for tool in demo.tools if tool.name == "cancel_order")
    assert tool.provider.model_dump()["url"] == "http://127.0.0.1:8001/tools"
    assert tool.access == "personal"
    assert tool.output_schema is not None
    validator = Draft202012Validator(tool.output_schema)
    arguments = {"order_id": "A-1001"}
    question = example.cancel_order(arguments, ADA, {})
    assert question["resultType"] == "input_required"
    assert question["inputRequests"]["confirm"]["method"] == "elicitation/create"
    for cancel in (True, False):
        answers = {"confirm": {"action": "accept", "content": {"cancel": cancel}}}
        call = {"input_responses": answers, "request_state": question["requestState"]}
        answer = example.cancel_order(arguments, ADA, call)
        assert list(validator.iter_errors(answer["structuredContent"])) == []


# Through Frontdesk ---------------------------------------------------------------------------


async def test_a_signed_in_customer_gets_their_points_through_frontdesk(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """Frontdesk's signed call is accepted and the backend answers for that customer."""
    tool = http_tool("loyalty_points", example_backend.url, access="personal")
    served = await serve(company("initrode", tool, signin=True))
    tokens = await flows.obtain_tokens(
        served.client, "initrode", email="ada@initrode.example", name="Ada"
    )
    result = await call_tool(served.client, "initrode", "loyalty_points", token=tokens.access)
    expected = example.loyalty_points({}, ADA, {})
    assert result == {**expected, "isError": False}


async def test_the_backends_error_for_a_guest_reaches_the_caller(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """Declared public, the tool is forwarded for a guest and the backend's isError kept."""
    served = await serve(company("initrode", http_tool("loyalty_points", example_backend.url)))
    result = await call_tool(served.client, "initrode", "loyalty_points")
    assert result == {
        "content": [{"type": "text", "text": "Sign in to see your loyalty points."}],
        "isError": True,
    }


async def test_identical_calls_in_one_batch_pass_the_replay_check(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """Two equal calls in one batch are two signatures, so neither looks like a replay."""
    served = await serve(company("initrode", http_tool("loyalty_points", example_backend.url)))
    batch = [rpc_call("loyalty_points", {}, 1), rpc_call("loyalty_points", {}, 2)]
    response = await post_mcp(served.client, "initrode", batch)
    assert response.status_code == 200, response.text
    texts = [reply["result"]["content"][0]["text"] for reply in response.json()]
    assert texts == ["Sign in to see your loyalty points."] * 2


async def test_a_call_the_backend_refuses_as_unsigned_is_an_error(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """Frontdesk signing with a secret the backend does not share gets its 401 as isError."""
    tool = http_tool("loyalty_points", example_backend.url, secret="not-the-backends-secret-0123")
    served = await serve(company("initrode", tool))
    result = await call_tool(served.client, "initrode", "loyalty_points")
    assert_plain_error(result, "loyalty_points failed (its service answered HTTP 401).")
