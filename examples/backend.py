"""A company backend for Frontdesk's ``http`` tool provider, on the standard library alone.

Frontdesk forwards each call of an ``http`` tool to the company's backend. This file is a
complete backend in one page: copy the idea into your own stack (the check is twenty lines
in any language). It serves the demo company's ``loyalty_points`` and ``cancel_order`` tools.

Run it::

    FRONTDESK_DEMO_BACKEND_SECRET=... python examples/backend.py [PORT]

It listens on 127.0.0.1 (PORT from the argument, else ``FRONTDESK_DEMO_BACKEND_PORT``,
else 8001; 0 picks a free port) and prints ``listening on http://127.0.0.1:PORT/tools``.
``./scripts/serve`` starts it beside Frontdesk with a fresh secret.

The request
-----------
One ``POST /tools`` per call, with a JSON body::

    {"tenant": "demo", "tool": "loyalty_points", "arguments": {},
     "customer": {"subject": "dev:ada@example.com", "email": "ada@example.com",
                  "email_verified": false, "name": "Ada", "scopes": ["email", "profile"]},
     "request_id": "8e6fb5f808517c57", "call_id": "3f0c9a6d1e2b4c58a7d6e5f4",
     "input_methods": ["elicitation/create"], "input_responses": null, "request_state": null}

``customer`` is the signed-in customer, or ``null`` for a guest; ``email`` is there only
when the customer granted the ``email`` scope and ``name`` only with ``profile``;
``email_verified`` is true only when the company's identity provider vouched for the address.
``request_id`` is in Frontdesk's logs too; ``call_id`` is new for every call.
``input_methods`` is what the customer's client can be asked (see "Asking the customer").
The headers::

    Frontdesk-Timestamp: 1795243646           unix seconds when Frontdesk signed the call
    Frontdesk-Signature: v1=<hex>             HMAC-SHA256(secret, "<timestamp>." + raw body)
    Frontdesk-Request-Id: 8e6fb5f808517c57

Check before you trust: recompute the HMAC over the exact bytes received (not re-encoded
JSON), compare in constant time, refuse a timestamp more than 300 s away from your clock,
and refuse a signature you have already accepted (a replay). Answer 401 to any of these.

The answer
----------
200 with an MCP tool result::

    {"content": [{"type": "text", "text": "..."}], "structuredContent": {...},
     "isError": false}

or the shorthand ``{"text": "..."}``. With only ``structuredContent``, Frontdesk adds its
JSON as text for clients that read text. ``"isError": true`` shows your message to the
customer's assistant. Anything else (another status, more than 1 MiB, JSON of another
shape, no answer within the tool's ``timeout``) reaches the caller as an ``isError`` result
with a plain message; Frontdesk logs the detail under the request id.

Asking the customer
-------------------
A tool may need the customer's input before it acts ("Cancel order #A-1001?"). It answers
200 with MCP 2026-07-28's input-required result instead of a tool result::

    {"resultType": "input_required",
     "inputRequests": {"confirm": {"method": "elicitation/create",
                                   "params": {"message": "...", "requestedSchema": {...}}}},
     "requestState": "<your own state, any string up to 2 KiB>"}

Up to 10 requests, each ``elicitation/create``, ``sampling/createMessage`` or
``roots/list``, and only of the kinds listed in ``input_methods`` (a client that cannot
answer gets an error saying so, and so does every MCP 2025 client). ``requestState`` is
optional. Frontdesk seals it (signed, expiring after 10 minutes, valid only for this company,
tool, arguments and customer) before the client sees it, so you need no storage of your own
and any Frontdesk instance can take the answer. The client then calls the tool again: you get
the same call with ``input_responses`` (the client's answers, keyed as you asked, e.g.
``{"confirm": {"action": "accept", "content": {"cancel": true}}}``) and ``request_state``
(yours, exactly as you answered it). Treat the answers as the customer's words, not proof of
anything; the client can read your state (it is signed, not encrypted), so keep no secret in
it; and the same answer may arrive twice (a client retrying), so make the action idempotent.
If an answer is missing or unusable, ask again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET_ENV = "FRONTDESK_DEMO_BACKEND_SECRET"  # noqa: S105 (the name of the variable, not a secret)
PORT_ENV = "FRONTDESK_DEMO_BACKEND_PORT"
DEFAULT_PORT = 8001
TOLERANCE_SECONDS = 300
# Frontdesk's own request bodies are at most a few hundred KiB.
MAX_BODY_BYTES = 1024 * 1024

Json = dict[str, Any]


def signature_is_valid(secret: bytes, timestamp: str, body: bytes, given: str, now: float) -> bool:
    """The Frontdesk-Signature check: fresh timestamp, HMAC compared in constant time."""
    if not (timestamp.isascii() and timestamp.isdigit()):
        return False
    if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    mac = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256)
    # As bytes: compare_digest refuses a str holding anything but ASCII, and a header may
    # hold any byte (http.server reads headers as Latin-1, which maps every byte back).
    return hmac.compare_digest(f"v1={mac.hexdigest()}".encode(), given.encode("latin-1"))


class ReplayGuard:
    """Remembers the signatures accepted in the last window; each may be used once.

    One process only: with several instances, keep them in a shared store instead
    (for example Redis ``SET signature 1 NX EX 600``).
    """

    def __init__(self) -> None:
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def first_use(self, signature: str, now: float) -> bool:
        with self._lock:
            self._seen = {sig: until for sig, until in self._seen.items() if until > now}
            if signature in self._seen:
                return False
            # A signature is stale after at most twice the tolerance (signed in the future).
            self._seen[signature] = now + 2 * TOLERANCE_SECONDS
            return True


# The tools: each gets the arguments, the customer and the whole call. A real backend would
# look the customer up in its own systems by ``subject`` (stable, e.g. "oidc:<issuer sub>")
# rather than by email, which may be withheld.


def loyalty_points(_arguments: Json, customer: Json | None, _call: Json) -> Json:
    if customer is None:
        return {"text": "Sign in to see your loyalty points.", "isError": True}
    # Made-up but stable numbers: the same customer always has the same points.
    seed = int(hashlib.sha256(customer["subject"].encode()).hexdigest()[:8], 16)
    points = seed % 5000
    tier = "gold" if points >= 3000 else "silver" if points >= 1000 else "bronze"
    who = customer.get("name") or customer.get("email") or "you"
    return {
        "content": [{"type": "text", "text": f"{who} has {points} points ({tier} tier)."}],
        "structuredContent": {
            "customer": customer["subject"],
            "points": points,
            "tier": tier,
            "points_to_next_reward": 500 - points % 500,
        },
    }


CONFIRM = "confirm"


def cancel_order(arguments: Json, customer: Json | None, call: Json) -> Json:
    """Cancels one of the customer's orders, once they have confirmed it."""
    if customer is None:
        return {"text": "Sign in to cancel an order.", "isError": True}
    order = arguments.get("order_id")
    if not isinstance(order, str) or not order.strip():
        return {"text": "Say which order to cancel (order_id).", "isError": True}
    answers = call.get("input_responses") or {}
    confirmation = answers.get(CONFIRM)
    # Only an answer to the question we asked counts: our own state says which one it was.
    if not isinstance(confirmation, dict) or call.get("request_state") != _asked_about(order):
        return {
            "resultType": "input_required",
            "inputRequests": {
                CONFIRM: {
                    "method": "elicitation/create",
                    "params": {
                        "message": f"Cancel order #{order}? This cannot be undone.",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {
                                "cancel": {"type": "boolean", "title": f"Cancel #{order}"}
                            },
                            "required": ["cancel"],
                        },
                    },
                }
            },
            "requestState": _asked_about(order),
        }
    content = confirmation.get("content") or {}
    if confirmation.get("action") != "accept" or content.get("cancel") is not True:
        return {
            "content": [{"type": "text", "text": f"Order #{order} was not cancelled."}],
            "structuredContent": {"order_id": order, "status": "unchanged"},
        }
    # A real backend cancels here, idempotently: a client may send the same answer twice.
    return {
        "content": [{"type": "text", "text": f"Order #{order} is cancelled."}],
        "structuredContent": {"order_id": order, "status": "cancelled"},
    }


def _asked_about(order: str) -> str:
    return json.dumps({"asked": "cancel", "order_id": order})


TOOLS = {"loyalty_points": loyalty_points, "cancel_order": cancel_order}


def answer(call: Json) -> tuple[int, Json]:
    """The status and body for one verified call."""
    tool = TOOLS.get(str(call.get("tool")))
    if tool is None:
        return 404, {"error": "unknown tool"}
    arguments = call.get("arguments")
    customer = call.get("customer")
    if not isinstance(arguments, dict) or not (customer is None or isinstance(customer, dict)):
        return 400, {"error": "malformed call"}
    return 200, tool(arguments, customer, call)


class BackendServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], secret: bytes) -> None:
        super().__init__(address, Handler)
        self.secret = secret
        self.replays = ReplayGuard()


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps the connection open between calls: Frontdesk reuses its connections.
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes: without this, each answer waits ~40 ms for
    # the client's delayed acknowledgement (Nagle).
    disable_nagle_algorithm = True
    server: BackendServer

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length", "")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            self.close_connection = True  # the unread body must not be taken for a request
            self._reply(413, {"error": "a body with a Content-Length up to 1 MiB is needed"})
            return
        body = self.rfile.read(int(length))
        if self.path != "/tools":
            self._reply(404, {"error": "not found"})
            return
        now = time.time()
        given = self.headers.get("Frontdesk-Signature", "")
        timestamp = self.headers.get("Frontdesk-Timestamp", "")
        if not signature_is_valid(self.server.secret, timestamp, body, given, now):
            self._reply(401, {"error": "bad signature"})
            return
        if not self.server.replays.first_use(given, now):
            self._reply(401, {"error": "replayed signature"})
            return
        try:
            call = json.loads(body)
        except ValueError:
            call = None
        if not isinstance(call, dict):
            self._reply(400, {"error": "malformed call"})
            return
        self._reply(*answer(call))

    def _reply(self, status: int, document: Json) -> None:
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main(argv: list[str]) -> None:
    secret = os.environ.get(SECRET_ENV, "")
    if len(secret) < 16:
        sys.exit(f"Set {SECRET_ENV} to the secret Frontdesk signs with (16 characters or more).")
    port = int(argv[1] if len(argv) > 1 else os.environ.get(PORT_ENV, DEFAULT_PORT))
    try:
        server = BackendServer(("127.0.0.1", port), secret.encode())
    except OSError as error:
        # One line, no traceback: whatever holds the port must not be mistaken for this.
        sys.exit(f"cannot listen on 127.0.0.1:{port}: {error.strerror} (set {PORT_ENV})")
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/tools", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main(sys.argv)
