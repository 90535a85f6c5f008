"""The sealed requestState of a tool that asks the customer: valid for one call, by one
caller, for ten minutes, under the operator's keys."""

from __future__ import annotations

import time

import pytest

from frontdesk.domain import Caller, Customer
from frontdesk.protocol.errors import INVALID_PARAMS, InvalidParams
from frontdesk.protocol.request_state import (
    ALTERED_OR_EXPIRED,
    ANOTHER_CALLS,
    STATE_TTL_SECONDS,
    RequestStates,
    StateBinding,
)
from frontdesk.protocol.sessions import SessionSigner

KEY = "request-state-key-for-the-tests-0123456789"
ADA = Customer("dev:ada@example.com", "ada@example.com", "Ada", frozenset({"email"}))
GUEST = Caller("203.0.113.7")
ADA_IN_APP = Caller("203.0.113.7", ADA, "app-1")
NOW = 1_800_000_000.0


def binding(
    caller: Caller = ADA_IN_APP,
    tenant: str = "acme",
    tool: str = "cancel",
    arguments: dict[str, object] | None = None,
    method: str = "tools/call",
) -> StateBinding:
    return StateBinding.of(
        tenant, method, tool, {"order": 1042} if arguments is None else arguments, caller
    )


def refusal(states: RequestStates, sealed: str, bound: StateBinding, now: float = NOW) -> str:
    with pytest.raises(InvalidParams) as raised:
        states.open(sealed, bound, now=now)
    assert raised.value.code == INVALID_PARAMS
    return raised.value.message


def test_the_state_comes_back_for_the_same_call() -> None:
    """Sealed and opened for one binding, the tool's state is returned as it was."""
    states = RequestStates([KEY])
    sealed = states.seal(binding(), "order=1042", now=NOW)
    assert states.open(sealed, binding(), now=NOW + 1) == "order=1042"
    assert states.open(states.seal(binding(), None, now=NOW), binding(), now=NOW) is None


def test_a_state_expires_after_ten_minutes() -> None:
    """Up to the TTL it opens; after it, it is refused as altered or expired."""
    states = RequestStates([KEY])
    sealed = states.seal(binding(), "s", now=NOW)
    assert states.open(sealed, binding(), now=NOW + STATE_TTL_SECONDS) == "s"
    assert refusal(states, sealed, binding(), now=NOW + STATE_TTL_SECONDS + 1) == (
        ALTERED_OR_EXPIRED
    )


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(binding(tenant="globex"), id="company"),
        pytest.param(binding(tool="refund"), id="tool"),
        pytest.param(binding(method="prompts/get"), id="prompt-of-the-same-name"),
        pytest.param(binding(arguments={"order": 1043}), id="arguments"),
        pytest.param(binding(caller=GUEST), id="guest"),
        pytest.param(binding(caller=Caller("203.0.113.7", ADA, "app-2")), id="oauth-client"),
        pytest.param(
            binding(caller=Caller("203.0.113.7", ADA._replace(subject="dev:eve"), "app-1")),
            id="customer",
        ),
    ],
)
def test_a_state_is_refused_for_any_other_call(other: StateBinding) -> None:
    """Another company, tool, prompt, arguments, customer or OAuth client: another call."""
    states = RequestStates([KEY])
    sealed = states.seal(binding(), "s", now=NOW)
    assert refusal(states, sealed, other) == ANOTHER_CALLS


def test_the_guests_address_is_not_part_of_the_binding() -> None:
    """A guest's state opens from another address: addresses change under mobile clients."""
    states = RequestStates([KEY])
    sealed = states.seal(binding(caller=GUEST), "s", now=NOW)
    assert states.open(sealed, binding(caller=Caller("198.51.100.1")), now=NOW) == "s"


def test_keys_roll_over_as_for_every_signed_value() -> None:
    """A state sealed under the old key opens once a new key signs; not after it is gone."""
    old = RequestStates([KEY])
    sealed = old.seal(binding(), "s", now=NOW)
    rolled = RequestStates(["a-new-key-for-the-tests-0123456789abcdef", KEY])
    assert rolled.open(sealed, binding(), now=NOW) == "s"
    gone = RequestStates(["a-new-key-for-the-tests-0123456789abcdef"])
    assert refusal(gone, sealed, binding()) == ALTERED_OR_EXPIRED


def test_the_state_has_a_purpose_of_its_own() -> None:
    """A session id, signed by the same keys for another purpose, is not a state."""
    session_id = SessionSigner([KEY], 3600).issue("acme", "2025-11-25", now=time.time())
    assert refusal(RequestStates([KEY]), session_id, binding(), now=time.time()) == (
        ALTERED_OR_EXPIRED
    )


def test_a_state_too_long_to_come_back_is_not_sealed() -> None:
    """Over the signer's limit the client could not send it back: refused when sealing."""
    with pytest.raises(ValueError, match="over 4096"):
        RequestStates([KEY]).seal(binding(), "\x01" * 2000, now=NOW)
