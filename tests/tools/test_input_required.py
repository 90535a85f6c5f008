"""Tools that ask the customer before they act (MCP 2026-07-28 input-required results), for
the python and the http provider: the sealed requestState, the call made again with the
answers on any instance, the refusals of a state that is not this call's, the client's
declared capabilities, and 2025 clients, who cannot be asked."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcp_types.methods import validate_server_result

from frontdesk.protocol.errors import INVALID_PARAMS
from frontdesk.protocol.request_state import ALTERED_OR_EXPIRED, ANOTHER_CALLS
from frontdesk.sealing.signing import b64decode, b64encode
from tests.oauth import flows
from tests.support.tool_annotations import read_only
from tests.tools import asking
from tests.tools.backends import (
    Handler,
    Json,
    ScriptedBackend,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    reply_json,
    text_of,
)
from tests.tools.conftest import ExampleBackend, Serve

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
EVERYTHING: Json = {"elicitation": {}, "sampling": {}, "roots": {}}
CANCEL = {"confirm": {"action": "accept", "content": {"cancel": True}}}


def python_tool(name: str, function: str, access: str = "public") -> Json:
    return {
        "name": name,
        "description": f"{name}, asking first.",
        "access": access,
        "annotations": read_only(name),
        "provider": {"type": "python", "target": f"tests.tools.asking:{function}"},
    }


async def modern_call(
    client: httpx.AsyncClient,
    tenant: str,
    name: str,
    arguments: Json | None = None,
    *,
    responses: Any = None,
    state: Any = None,
    capabilities: Json | None = None,
    token: str | None = None,
) -> httpx.Response:
    """One 2026-07-28 tools/call, with the answers and the requestState when given."""
    params: Json = {
        "name": name,
        "arguments": arguments or {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": (
                EVERYTHING if capabilities is None else capabilities
            ),
        },
    }
    if responses is not None:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    return await client.post(f"/v1/{tenant}/mcp", json=body, headers=headers)


def result_of(response: httpx.Response) -> Json:
    """The result of a reply answered with a 200, valid for the revision."""
    assert response.status_code == 200, response.text
    reply: Json = response.json()
    assert "error" not in reply, reply
    result: Json = reply["result"]
    validate_server_result("tools/call", MODERN, result)
    return result


def error_of(response: httpx.Response) -> Json:
    """The error of a reply refused with invalid params (400 in this revision)."""
    assert response.status_code == 400, response.text
    reply: Json = response.json()
    assert reply["id"] == 7
    error: Json = reply["error"]
    assert error["code"] == INVALID_PARAMS
    return error


async def asked(client: httpx.AsyncClient, tenant: str = "initrode", **call: Any) -> Json:
    """The input-required result of the first call of confirm_cancel (order 1042)."""
    result = result_of(await modern_call(client, tenant, "cancel", {"order": 1042}, **call))
    assert result["resultType"] == "input_required", result
    return result


# The python provider ---------------------------------------------------------------------------


async def test_a_tool_that_asks_gets_an_input_required_result_with_a_sealed_state(
    serve: Serve,
) -> None:
    """The question goes out as asked; the requestState is Frontdesk's seal, not the tool's."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    result = await asked(served.client)
    assert result["inputRequests"] == {"confirm": asking.QUESTION}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    sealed = result["requestState"]
    assert isinstance(sealed, str)
    assert sealed != asking.STATE
    assert "content" not in result


async def test_the_call_made_again_reaches_the_tool_with_the_answers_and_its_state(
    serve: Serve,
) -> None:
    """Answers and the requestState sent back: the tool gets both, its state as it left it."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    sealed = (await asked(served.client))["requestState"]
    response = await modern_call(
        served.client, "initrode", "cancel", {"order": 1042}, responses=CANCEL, state=sealed
    )
    result = result_of(response)
    assert result["resultType"] == "complete"
    assert result["isError"] is False
    assert result["structuredContent"] == {
        "order": 1042,
        "answer": CANCEL["confirm"],
        "state": asking.STATE,
        "customer": None,
    }


async def test_another_instance_with_the_same_keys_continues_the_call(
    serve: Serve,
) -> None:
    """The state is all there is: a second instance takes the answer the first asked for."""
    first = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    second = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    sealed = (await asked(first.client))["requestState"]
    response = await modern_call(
        second.client, "initrode", "cancel", {"order": 1042}, responses=CANCEL, state=sealed
    )
    assert result_of(response)["structuredContent"]["state"] == asking.STATE


async def test_answers_without_a_state_reach_the_tool_without_one(serve: Serve) -> None:
    """The revision lets a client answer without a requestState: the tool decides."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    response = await modern_call(
        served.client, "initrode", "cancel", {"order": 1042}, responses=CANCEL
    )
    assert result_of(response)["structuredContent"]["state"] is None


async def test_a_2025_client_is_told_the_action_needs_a_client_that_can_answer(
    serve: Serve,
) -> None:
    """No input-required result in 2025: an isError result saying why."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    result = await call_tool(served.client, "initrode", "cancel", {"order": 1042})
    assert_plain_error(
        result,
        "cancel needs to ask the customer a question before it can act, and this client"
        " cannot answer questions; use a client that speaks MCP 2026-07-28.",
    )


# Refusals of the state ------------------------------------------------------------------------


async def test_an_altered_state_is_refused_as_invalid_params(serve: Serve) -> None:
    """A state changed by the client (here: the tool's state rewritten) never reaches the
    tool."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    sealed = (await asked(served.client))["requestState"]
    body, _, mac = sealed.partition(".")
    payload = json.loads(b64decode(body))
    payload["s"] = "order=1042;seen=shipped"
    forged = f"{b64encode(json.dumps(payload).encode())}.{mac}"
    for state in (forged, sealed + "-TAMPERED", "not-a-state", "é" * 10):
        response = await modern_call(
            served.client, "initrode", "cancel", {"order": 1042}, responses=CANCEL, state=state
        )
        assert error_of(response)["message"] == ALTERED_OR_EXPIRED


@pytest.mark.parametrize(
    ("tenant", "tool", "arguments"),
    [
        pytest.param("initech", "cancel", {"order": 1042}, id="another-company"),
        pytest.param("initrode", "cancel_too", {"order": 1042}, id="another-tool"),
        pytest.param("initrode", "cancel", {"order": 1043}, id="other-arguments"),
    ],
)
async def test_a_state_for_another_call_is_refused(
    serve: Serve, tenant: str, tool: str, arguments: Json
) -> None:
    """A genuine state sent with another company, tool or arguments is refused."""
    tools = (python_tool("cancel", "confirm_cancel"), python_tool("cancel_too", "confirm_cancel"))
    served = await serve(company("initrode", *tools), company("initech", *tools))
    sealed = (await asked(served.client))["requestState"]
    response = await modern_call(
        served.client, tenant, tool, arguments, responses=CANCEL, state=sealed
    )
    assert error_of(response)["message"] == ANOTHER_CALLS


async def test_a_guests_state_is_refused_for_a_signed_in_customer_and_back(
    serve: Serve,
) -> None:
    """The state is bound to the caller: a guest's is not a customer's, nor the reverse."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel"), signin=True))
    tokens = await flows.obtain_tokens(served.client, "initrode", email="ada@initrode.example")
    guests = (await asked(served.client))["requestState"]
    customers = (await asked(served.client, token=tokens.access))["requestState"]
    as_customer = await modern_call(
        served.client,
        "initrode",
        "cancel",
        {"order": 1042},
        responses=CANCEL,
        state=guests,
        token=tokens.access,
    )
    as_guest = await modern_call(
        served.client, "initrode", "cancel", {"order": 1042}, responses=CANCEL, state=customers
    )
    assert error_of(as_customer)["message"] == ANOTHER_CALLS
    assert error_of(as_guest)["message"] == ANOTHER_CALLS
    same_customer = await modern_call(
        served.client,
        "initrode",
        "cancel",
        {"order": 1042},
        responses=CANCEL,
        state=customers,
        token=tokens.access,
    )
    assert result_of(same_customer)["structuredContent"]["customer"] == "dev:ada@initrode.example"


async def test_arguments_in_another_key_order_are_the_same_call(serve: Serve) -> None:
    """The binding is to the arguments' content, not to how the client ordered them."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    first = await modern_call(served.client, "initrode", "cancel", {"order": 1, "note": "x"})
    sealed = result_of(first)["requestState"]
    again = await modern_call(
        served.client,
        "initrode",
        "cancel",
        {"note": "x", "order": 1},
        responses=CANCEL,
        state=sealed,
    )
    assert result_of(again)["structuredContent"]["state"] == asking.STATE


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("responses", {"confirm": 12345}, id="answer-not-an-object"),
        pytest.param("responses", ["confirm"], id="answers-not-an-object"),
        pytest.param("state", 42, id="state-not-a-string"),
    ],
)
async def test_malformed_answers_or_state_are_invalid_params(
    serve: Serve, field: str, value: Any
) -> None:
    """inputResponses must be an object of objects, requestState a string."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    response = await modern_call(
        served.client, "initrode", "cancel", {"order": 1042}, **{field: value}
    )
    error_of(response)


async def test_null_answers_are_invalid_params(serve: Serve) -> None:
    """An inputResponses of null is a protocol error, not an absent field."""
    served = await serve(company("initrode", python_tool("cancel", "confirm_cancel")))
    params = {
        "name": "cancel",
        "arguments": {},
        "inputResponses": None,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": EVERYTHING,
        },
    }
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "cancel"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    error_of(await served.client.post("/v1/initrode/mcp", json=body, headers=headers))


# What the client can be asked -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("capabilities", "methods"),
    [
        pytest.param({}, [], id="nothing"),
        pytest.param({"sampling": {}}, ["sampling/createMessage"], id="sampling"),
        pytest.param(
            EVERYTHING, ["elicitation/create", "roots/list", "sampling/createMessage"], id="all"
        ),
    ],
)
async def test_the_tool_learns_what_the_client_can_be_asked(
    serve: Serve, capabilities: Json, methods: list[str]
) -> None:
    """call.input_methods follows the client's declared capabilities."""
    served = await serve(company("initrode", python_tool("methods", "what_can_be_asked")))
    response = await modern_call(served.client, "initrode", "methods", capabilities=capabilities)
    assert result_of(response)["structuredContent"] == {"methods": methods}


@pytest.mark.parametrize(
    ("function", "capabilities", "named"),
    [
        pytest.param("confirm_cancel", {"sampling": {}}, "elicitation/create", id="elicitation"),
        pytest.param("ask_the_model", {"elicitation": {}}, "sampling/createMessage", id="model"),
        pytest.param("ask_by_url", {"elicitation": {}}, "elicitation in URL mode", id="url"),
    ],
)
async def test_a_question_the_client_cannot_answer_is_an_error_result(
    serve: Serve, function: str, capabilities: Json, named: str
) -> None:
    """Nothing is asked that the client did not declare (the revision's MUST)."""
    served = await serve(company("initrode", python_tool("ask", function)))
    response = await modern_call(served.client, "initrode", "ask", capabilities=capabilities)
    result = result_of(response)
    assert result["resultType"] == "complete"
    assert result["isError"] is True
    assert text_of(result) == (
        f"ask needs to ask the customer something this client cannot answer ({named})."
    )


async def test_url_elicitation_is_asked_of_a_client_that_declared_it(serve: Serve) -> None:
    """Declaring elicitation.url admits URL mode."""
    served = await serve(company("initrode", python_tool("ask", "ask_by_url")))
    response = await modern_call(
        served.client, "initrode", "ask", capabilities={"elicitation": {"url": {}}}
    )
    assert result_of(response)["resultType"] == "input_required"


@pytest.mark.parametrize(
    ("function", "message"),
    [
        pytest.param("oversized_state", "ask answered with more than Frontdesk accepts.", id="big"),
        pytest.param("malformed_request", "ask failed; please try again later.", id="malformed"),
    ],
)
async def test_a_tool_asking_wrongly_is_a_plain_error(
    serve: Serve, function: str, message: str
) -> None:
    """A state too large to carry or a request of no known kind is not passed on."""
    served = await serve(company("initrode", python_tool("ask", function)))
    result = result_of(await modern_call(served.client, "initrode", "ask"))
    assert_plain_error(result, message)


async def test_a_personal_tool_asks_nothing_of_a_guest(serve: Serve) -> None:
    """Sign-in comes first: a guest gets the 401 challenge, not the question."""
    served = await serve(
        company("initrode", python_tool("cancel", "confirm_cancel", "personal"), signin=True)
    )
    response = await modern_call(served.client, "initrode", "cancel", {"order": 1042})
    assert response.status_code == 401
    assert response.json()["result"]["isError"] is True


# The http provider ----------------------------------------------------------------------------


def asking_backend(backend: ScriptedBackend) -> str:
    """A backend that asks to confirm until it gets the answer with its own state back."""

    def respond(handler: Handler) -> None:
        call = handler.server.backend.received[-1].json()
        if call["input_responses"] is None:
            document: Json = {
                "resultType": "input_required",
                "inputRequests": {"confirm": asking.QUESTION},
                "requestState": "backend-state:1042",
            }
        else:
            document = {
                "structuredContent": {
                    "answers": call["input_responses"],
                    "state": call["request_state"],
                }
            }
        reply_json(document)(handler)

    backend.routes["/tools"] = respond
    return backend.url("/tools")


async def test_a_backend_asks_and_gets_the_answers_and_its_state(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The backend's input-required answer goes out sealed; the call made again carries the
    answers and the backend's own state, and what the client can be asked."""
    served = await serve(company("initrode", http_tool("cancel", asking_backend(backend))))
    result = await asked(served.client)
    assert result["inputRequests"] == {"confirm": asking.QUESTION}
    response = await modern_call(
        served.client,
        "initrode",
        "cancel",
        {"order": 1042},
        responses=CANCEL,
        state=result["requestState"],
    )
    assert result_of(response)["structuredContent"] == {
        "answers": CANCEL,
        "state": "backend-state:1042",
    }
    first, again = (received.json() for received in backend.received)
    assert first["input_methods"] == ["elicitation/create", "roots/list", "sampling/createMessage"]
    assert (first["input_responses"], first["request_state"]) == (None, None)
    assert again["arguments"] == {"order": 1042}


async def test_a_backend_that_asks_a_2025_client_gives_an_error_result(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The 2025 caller is told why, and the backend learned it could ask nothing."""
    served = await serve(company("initrode", http_tool("cancel", asking_backend(backend))))
    result = await call_tool(served.client, "initrode", "cancel", {"order": 1042})
    assert result["isError"] is True
    assert "cannot answer questions" in text_of(result)
    assert backend.received[0].json()["input_methods"] == []


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({"resultType": "input_required"}, id="no-requests"),
        pytest.param({"resultType": "input_required", "inputRequests": {}}, id="empty"),
        pytest.param(
            {"resultType": "input_required", "inputRequests": {"q": {"method": "ping"}}},
            id="unknown-method",
        ),
        pytest.param(
            {
                "resultType": "input_required",
                "inputRequests": {"q": {"method": "elicitation/create", "params": {}}},
            },
            id="no-message",
        ),
        pytest.param(
            {
                "resultType": "input_required",
                "inputRequests": {"q": asking.QUESTION},
                "requestState": 42,
            },
            id="state-not-a-string",
        ),
        pytest.param(
            {
                "resultType": "input_required",
                "inputRequests": {"q": asking.QUESTION},
                "requestState": "x" * 2049,
            },
            id="state-over-2-kib",
        ),
    ],
)
async def test_a_malformed_input_required_answer_is_a_plain_error(
    serve: Serve, backend: ScriptedBackend, answer: Json
) -> None:
    """What the client would reject, or Frontdesk could not carry, is not passed on."""
    backend.routes["/tools"] = reply_json(answer)
    served = await serve(company("initrode", http_tool("ask", backend.url("/tools"))))
    result = result_of(await modern_call(served.client, "initrode", "ask"))
    assert_plain_error(result, "ask answered in a form Frontdesk cannot read.", backend)


# The example backend's demo tool -------------------------------------------------------------


async def test_the_example_cancels_an_order_only_once_the_customer_confirms(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """cancel_order asks, then cancels on "yes" and leaves the order on "no"."""
    tool = http_tool("cancel_order", example_backend.url, access="personal")
    served = await serve(company("initrode", tool, signin=True))
    tokens = await flows.obtain_tokens(served.client, "initrode", email="ada@initrode.example")
    first = await modern_call(
        served.client, "initrode", "cancel_order", {"order_id": "A-1001"}, token=tokens.access
    )
    question = result_of(first)
    assert question["resultType"] == "input_required"
    [asked_for] = question["inputRequests"].values()
    assert asked_for["params"]["message"] == "Cancel order #A-1001? This cannot be undone."

    async def answer(cancel: bool) -> Json:
        key = next(iter(question["inputRequests"]))
        response = await modern_call(
            served.client,
            "initrode",
            "cancel_order",
            {"order_id": "A-1001"},
            responses={key: {"action": "accept", "content": {"cancel": cancel}}},
            state=question["requestState"],
            token=tokens.access,
        )
        return result_of(response)

    assert (await answer(True))["structuredContent"] == {
        "order_id": "A-1001",
        "status": "cancelled",
    }
    assert (await answer(False))["structuredContent"] == {
        "order_id": "A-1001",
        "status": "unchanged",
    }


async def test_the_example_asks_again_for_an_answer_without_its_state(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """An answer that does not come with the backend's own question is not acted on."""
    tool = http_tool("cancel_order", example_backend.url, access="personal")
    served = await serve(company("initrode", tool, signin=True))
    tokens = await flows.obtain_tokens(served.client, "initrode", email="ada@initrode.example")
    response = await modern_call(
        served.client,
        "initrode",
        "cancel_order",
        {"order_id": "A-1001"},
        responses={"confirm": {"action": "accept", "content": {"cancel": True}}},
        token=tokens.access,
    )
    assert result_of(response)["resultType"] == "input_required"


async def test_the_example_tells_a_guest_to_sign_in_before_asking_anything(
    serve: Serve, example_backend: ExampleBackend
) -> None:
    """Declared public by mistake, the tool still asks nothing of a guest."""
    served = await serve(company("initrode", http_tool("cancel_order", example_backend.url)))
    response = await modern_call(served.client, "initrode", "cancel_order", {"order_id": "A-1"})
    assert_plain_error(result_of(response), "Sign in to cancel an order.")
