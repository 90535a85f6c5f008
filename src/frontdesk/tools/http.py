"""The ``http`` provider: a tool answered by the company's own backend.

Each call is a signed POST (see ``tools.signature``) of::

    {"tenant": "acme", "tool": "order_status", "arguments": {...},
     "customer": {"subject": ..., "email": ..., "email_verified": false, "name": ...,
                  "scopes": [...]} | null,
     "request_id": "8e6fb5f808517c57", "call_id": "3f0c9a6d1e2b4c58a7d6e5f4",
     "input_methods": ["elicitation/create"], "input_responses": null, "request_state": null}

``request_id`` is shared by every call of one MCP request (a batch) and appears in
Frontdesk's logs; ``call_id`` is new for every call, so no two calls are signed alike and a
backend may refuse any signature it has seen before (replay) or use it as an idempotency key.
``input_methods`` lists what the caller's client can be asked (``[]`` when nothing: every
2025 client); when the client calls again after the backend asked for input,
``input_responses`` holds its answers and ``request_state`` the backend's own state, both
``null`` otherwise.

The backend answers 200 with an MCP tool result: ``content`` (content blocks),
``structuredContent`` and ``isError``, or the shorthand ``{"text": "..."}``; or, to ask the
customer's client first, ``{"resultType": "input_required", "inputRequests": {...},
"requestState": "..."}`` (the state optional, a string of at most 2 KiB). Any other
answer (a non-2xx status, a body over ``MAX_RESPONSE_BYTES`` once decompressed, a content
coding other than gzip, JSON of another shape or nested past ``json_nesting.MAX_NESTING``
levels, a refused address) becomes an ``isError`` result with a plain message; the detail
is logged with the request id. One shared httpx client keeps connections alive across
calls.

With ``identity: jwt`` (companies.caller_identity), a signed-in customer's call also carries
``Authorization: Bearer <JWT>`` (frontdesk.tools.identity_tokens); a guest's carries none.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import httpx
import orjson
import structlog

from frontdesk.limits.json_nesting import MAX_NESTING, may_nest_deeper, nests_deeper
from frontdesk.tools import signature
from frontdesk.tools.exchange import exchange
from frontdesk.tools.identity import IdentityMinter
from frontdesk.tools.provider import (
    InputRequired,
    ToolAnswer,
    ToolCall,
    ToolError,
    ToolResult,
)

log = structlog.get_logger(__name__)

# One backend may hold this many of the shared pool's connections at once (the pool has
# 200, app.py); further calls to it wait their turn within their own timeout, so a backend
# that hangs stalls only its own calls, never the pool other companies' calls need.
CONNECTIONS_PER_BACKEND = 50
CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
# The one content coding Frontdesk asks for and decodes itself, within the cap
# (outbound_policy.read_capped). httpx would otherwise advertise and inflate whatever codecs
# are installed, a whole network read at a time: 64 KiB of gzip inflates to 64 MiB at once.
ACCEPT_ENCODING = "gzip"


class HttpToolProvider:
    def __init__(
        self,
        url: str,
        secret: str,
        http: httpx.AsyncClient,
        lane: asyncio.Semaphore | None = None,
        identity: IdentityMinter | None = None,
        audience: str | None = None,
    ) -> None:
        self._url = url
        # Set when the company chose ``identity: jwt``: a signed-in customer's call also
        # carries a JWT for ``audience`` (the URL unless named), which the backend's gateway
        # verifies against the company's published keys (frontdesk.tools.identity_tokens).
        self._identity = identity
        self._audience = audience or url
        # Shared by every tool of the same backend (ProviderFactory hands it out).
        self._lane = lane or asyncio.Semaphore(CONNECTIONS_PER_BACKEND)
        self._secret = secret
        self._http = http

    async def call(self, call: ToolCall) -> ToolAnswer:
        customer = call.customer
        body = orjson.dumps(
            {
                "tenant": call.tenant_key,
                "tool": call.tool,
                "arguments": call.arguments,
                "customer": None
                if customer is None
                else {
                    "subject": customer.subject,
                    "email": customer.email,
                    # True only when the company's identity provider vouched for the
                    # address; an unverified one is never presented as verified.
                    "email_verified": customer.email_verified,
                    "name": customer.name,
                    "scopes": sorted(customer.scopes),
                },
                "request_id": call.request_id,
                "call_id": secrets.token_hex(12),
                "input_methods": sorted(call.input_methods),
                "input_responses": call.input_responses,
                "request_state": call.state,
            }
        )
        headers = signature.headers(self._secret, int(time.time()), body, call.request_id)
        headers["accept-encoding"] = ACCEPT_ENCODING
        if self._identity is not None and customer is not None:
            token = await self._identity.mint(
                call.tenant_key, self._audience, customer, call.client_id, customer.scopes
            )
            headers["authorization"] = f"Bearer {token}"
        status, _, raw = await exchange(
            self._http, self._lane, call.tool, "POST", self._url, content=body, headers=headers
        )
        if not 200 <= status < 300:
            log.warning("tool_backend_failed", tool=call.tool, status=status)
            raise ToolError(f"{call.tool} failed (its service answered HTTP {status}).")
        try:
            document = orjson.loads(raw)
            # Read, but too deep to be written into the reply (json_nesting): refused here,
            # as any other answer Frontdesk cannot pass on.
            if may_nest_deeper(raw) and nests_deeper(document):
                raise ValueError(f"the answer nests more than {MAX_NESTING} levels deep")
            return parse_result(document)
        except (orjson.JSONDecodeError, ValueError) as error:
            log.warning("tool_backend_malformed", tool=call.tool, error=str(error))
            raise ToolError(f"{call.tool} answered in a form Frontdesk cannot read.") from None


def parse_result(document: Any) -> ToolAnswer:
    """A backend's answer as a ToolResult or InputRequired; ValueError names what is wrong
    with it."""
    if not isinstance(document, dict):
        raise ValueError("the answer is not a JSON object")
    if document.get("resultType") == "input_required":
        requests: Any = document.get("inputRequests")
        return InputRequired(requests, document.get("requestState"))
    is_error = document.get("isError", False)
    if not isinstance(is_error, bool):
        raise ValueError("isError must be a boolean")
    structured = document.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        raise ValueError("structuredContent must be an object")
    if "text" in document and "content" not in document:
        text = document["text"]
        if not isinstance(text, str):
            raise ValueError("text must be a string")
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    else:
        content = document.get("content", [])
        if not isinstance(content, list) or not all(_is_block(block) for block in content):
            raise ValueError("content must be a list of MCP content blocks")
    if not content and structured is not None:
        content = [{"type": "text", "text": orjson.dumps(structured).decode()}]
    return ToolResult(content=content, structured=structured, is_error=is_error)


# The string fields each MCP content block must carry; a block without them would make the
# caller's client reject the whole result instead of reading a plain error.
_REQUIRED_FIELDS = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
}


def _is_block(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") not in CONTENT_TYPES:
        return False
    if block["type"] == "resource":
        resource = block.get("resource")
        return (
            isinstance(resource, dict)
            and isinstance(resource.get("uri"), str)
            and (isinstance(resource.get("text"), str) or isinstance(resource.get("blob"), str))
        )
    return all(isinstance(block.get(name), str) for name in _REQUIRED_FIELDS[block["type"]])
