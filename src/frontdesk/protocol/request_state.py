"""The ``requestState`` of an input-required result (MCP 2026-07-28): a tool's own state,
sealed so that whichever instance the client sends it back to can continue the call.

The client holds the state between the question and its answer, so it is treated as
attacker-controlled (the revision says so): it is a signed value (``frontdesk.sealing.signing``,
a purpose of its own) that expires, and it is bound to the company, the method and the tool
or prompt it names, the exact arguments and the caller (customer subject and OAuth client;
none for a guest). A state that fails any of these is refused as invalid params, never
handed to the tool or prompt. Signed, not encrypted: the client can read the state, so a
tool or prompt keeps no secret in it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import orjson

from frontdesk.domain import Caller
from frontdesk.protocol.errors import InvalidParams
from frontdesk.sealing.signing import MAX_SIGNED_LENGTH, Signer, b64encode

# Long enough for a customer to read a question and answer it; short enough that an answer
# left aside is not applied to a world that has moved on.
STATE_TTL_SECONDS = 600

ALTERED_OR_EXPIRED = (
    "Invalid params: requestState cannot be accepted (altered, or older than"
    f" {STATE_TTL_SECONDS // 60} minutes); call the tool again without it to start over"
)
ANOTHER_CALLS = (
    "Invalid params: requestState belongs to another call (another company, tool or prompt,"
    " arguments or customer); make the call again without it to start over"
)


class StateBinding(NamedTuple):
    """What a sealed state is valid for: exactly one call, by one caller."""

    tenant_key: str
    # ``tools/call`` or ``prompts/get``: a tool and a prompt may share a name.
    method: str
    name: str
    arguments_digest: str
    subject: str | None
    client_id: str | None

    @classmethod
    def of(
        cls,
        tenant_key: str,
        method: str,
        name: str,
        arguments: Mapping[str, Any],
        caller: Caller,
    ) -> StateBinding:
        # Sorted keys: the same arguments in another order are the same call.
        canonical = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)
        digest = b64encode(hashlib.sha256(canonical).digest())
        customer = caller.customer
        subject = None if customer is None else customer.subject
        return cls(tenant_key, method, name, digest, subject, caller.client_id)


class RequestStates:
    def __init__(self, secret_keys: Sequence[str], ttl_seconds: int = STATE_TTL_SECONDS) -> None:
        self._signer = Signer(secret_keys, "mcp-request-state/v1")
        self._ttl = ttl_seconds

    def seal(self, binding: StateBinding, state: str | None, now: float | None = None) -> str:
        """The requestState carrying the tool's or prompt's ``state`` for this call only;
        ValueError when it would be too long to be accepted back."""
        payload = {
            "t": binding.tenant_key,
            "m": binding.method,
            "n": binding.name,
            "a": binding.arguments_digest,
            "c": binding.subject,
            "i": binding.client_id,
            "s": state,
        }
        sealed = self._signer.sign(payload, self._ttl, now=now)
        if len(sealed) > MAX_SIGNED_LENGTH:
            raise ValueError(f"a sealed state is over {MAX_SIGNED_LENGTH} characters")
        return sealed

    def open(self, sealed: str, binding: StateBinding, now: float | None = None) -> str | None:
        """The tool's state inside ``sealed``; InvalidParams when it cannot be trusted for
        this call."""
        payload = self._signer.verify(sealed, now=now)
        if payload is None:
            raise InvalidParams(ALTERED_OR_EXPIRED)
        # Verified above: these are the values this service signed, no longer the client's.
        call_of_state = (payload.get("t"), payload.get("m"), payload.get("n"), payload.get("a"))
        caller_of_state = (payload.get("c"), payload.get("i"))
        if call_of_state != binding[:4] or caller_of_state != binding[4:]:
            raise InvalidParams(ANOTHER_CALLS)
        state = payload.get("s")
        return state if isinstance(state, str) else None
