"""The error paths an unauthenticated or misbehaving client reaches cheaply, one request
each that it can repeat at will, and the means to send them to the application's ASGI
interface in-process (tests/adversarial/test_error_paths_memory.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import anyio
import orjson

from frontdesk.app import Frontdesk
from frontdesk.config import MAX_BODY_BYTES
from frontdesk.oauth.credentials import Kind, mint
from frontdesk.web.asgi import Message
from tests.oauth import flows

SIGNIN = "initech"  # sign-in set up (tests/fixtures/companies.yaml)
NO_SIGNIN = "globex"  # no sign-in, and the settings' rate limit (set out of reach)
UNKNOWN = "no-such-company"
FORM = (("content-type", "application/x-www-form-urlencoded"),)
JSON = (("content-type", "application/json"),)
MODERN = "2026-07-28"
PING = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
MODERN_DISCOVER = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
    }
)


@dataclass(frozen=True, slots=True)
class ErrorPath:
    """One request a client can repeat at will, and the error status it must get.

    ``{client}``, ``{code}``, ``{access}`` and ``{refresh}`` in the query, headers and body
    stand for a registered client's id, its expired code and its expired tokens (the
    ``values`` fixture)."""

    method: str
    path: str
    status: int
    query: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""


def _form(**fields: str) -> str:
    # The braces of a placeholder stay as they are; what fills them is URL-safe.
    return urlencode(fields, safe="{}")


def _bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (*JSON, ("authorization", f"Bearer {token}"))


ERROR_PATHS = {
    # Routing (Starlette's own 404 and 405).
    "no-such-route": ErrorPath("GET", "/no/such/route", 404),
    "method-not-allowed": ErrorPath("GET", f"/v1/{SIGNIN}/oauth/token", 405),
    # Sign-in not set up (SigninNotSetUp, the page's 404).
    "metadata-without-signin": ErrorPath(
        "GET", f"/.well-known/oauth-authorization-server/v1/{NO_SIGNIN}/oauth", 404
    ),
    "token-without-signin": ErrorPath(
        "POST", f"/v1/{NO_SIGNIN}/oauth/token", 404, headers=FORM, body=_form(grant_type="x")
    ),
    "authorize-without-signin": ErrorPath("GET", f"/v1/{NO_SIGNIN}/oauth/authorize", 404),
    # Unknown clients (the page at authorize, invalid_client at token and revoke).
    "authorize-unknown-client": ErrorPath(
        "GET",
        f"/v1/{SIGNIN}/oauth/authorize",
        400,
        query=_form(client_id="fdc_unknown", redirect_uri=flows.REDIRECT_URI),
    ),
    "token-unknown-client": ErrorPath(
        "POST",
        f"/v1/{SIGNIN}/oauth/token",
        401,
        headers=FORM,
        body=_form(grant_type="authorization_code", client_id="fdc_unknown", code="fdac_x"),
    ),
    "revoke-unknown-client": ErrorPath(
        "POST",
        f"/v1/{SIGNIN}/oauth/revoke",
        401,
        headers=FORM,
        body=_form(client_id="fdc_unknown", token="fdat_x"),
    ),
    # A redirect URI the client never registered.
    "authorize-bad-redirect": ErrorPath(
        "GET",
        f"/v1/{SIGNIN}/oauth/authorize",
        400,
        query=_form(client_id="{client}", redirect_uri="https://elsewhere.example/callback"),
    ),
    # Expired: a code, a refresh token, a sign-in in progress (forged here).
    "token-expired-code": ErrorPath(
        "POST",
        f"/v1/{SIGNIN}/oauth/token",
        400,
        headers=FORM,
        body=_form(
            grant_type="authorization_code",
            client_id="{client}",
            code="{code}",
            redirect_uri=flows.REDIRECT_URI,
            code_verifier="v" * 43,
        ),
    ),
    "token-expired-refresh": ErrorPath(
        "POST",
        f"/v1/{SIGNIN}/oauth/token",
        400,
        headers=FORM,
        body=_form(grant_type="refresh_token", client_id="{client}", refresh_token="{refresh}"),
    ),
    "consent-expired-flow": ErrorPath(
        "POST",
        f"/v1/{SIGNIN}/oauth/consent",
        400,
        headers=FORM,
        body=_form(flow="forged", decision="allow"),
    ),
    "callback-expired-flow": ErrorPath(
        "GET", f"/v1/{SIGNIN}/oauth/callback", 400, query=_form(state="forged", code="x")
    ),
    # The MCP endpoint.
    "mcp-unknown-company": ErrorPath(
        "POST", f"/v1/{UNKNOWN}/mcp", 404, headers=JSON, body=PING.decode()
    ),
    "mcp-bad-json": ErrorPath("POST", f"/v1/{NO_SIGNIN}/mcp", 400, headers=JSON, body="{"),
    "mcp-not-json": ErrorPath("POST", f"/v1/{NO_SIGNIN}/mcp", 400, body=PING.decode()),
    "mcp-too-large": ErrorPath(
        "POST",
        f"/v1/{NO_SIGNIN}/mcp",
        413,
        headers=(*JSON, ("content-length", str(MAX_BODY_BYTES + 1))),
    ),
    "mcp-unknown-method": ErrorPath(
        "POST",
        f"/v1/{NO_SIGNIN}/mcp",
        200,
        headers=JSON,
        body='{"jsonrpc":"2.0","id":1,"method":"no/such/method"}',
    ),
    "mcp-unknown-session": ErrorPath(
        "POST",
        f"/v1/{NO_SIGNIN}/mcp",
        404,
        headers=(*JSON, ("mcp-session-id", "forged")),
        body=PING.decode(),
    ),
    "mcp-expired-token": ErrorPath(
        "POST", f"/v1/{SIGNIN}/mcp", 401, headers=_bearer("{access}"), body=PING.decode()
    ),
    "mcp-token-without-signin": ErrorPath(
        "POST", f"/v1/{NO_SIGNIN}/mcp", 401, headers=_bearer(mint(Kind.ACCESS)), body=PING.decode()
    ),
    "mcp-unsupported-version": ErrorPath(
        "POST",
        f"/v1/{NO_SIGNIN}/mcp",
        400,
        headers=(*JSON, ("mcp-protocol-version", "1999-01-01")),
        body=PING.decode(),
    ),
    "mcp-2026-header-mismatch": ErrorPath(
        "POST",
        f"/v1/{NO_SIGNIN}/mcp",
        400,
        headers=(*JSON, ("mcp-protocol-version", MODERN), ("mcp-method", "tools/list")),
        body=MODERN_DISCOVER.decode(),
    ),
    "mcp-2026-claimed-in-body-only": ErrorPath(
        "POST", f"/v1/{NO_SIGNIN}/mcp", 400, headers=JSON, body=MODERN_DISCOVER.decode()
    ),
}
# Starlette's router answers these itself, without calling frontdesk code that raises.
RAISES_NOTHING_OF_FRONTDESK = frozenset({"no-such-route", "method-not-allowed"})


# Sending them ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prepared:
    """One error path's request as ASGI hands it to the application."""

    scope: dict[str, Any]
    body: bytes
    status: int


def prepare(error_path: ErrorPath, values: dict[str, str]) -> Prepared:
    def filled(text: str) -> str:
        for name, value in values.items():
            text = text.replace(f"{{{name}}}", value)
        return text

    headers = [(b"host", b"127.0.0.1:8000")]
    headers.extend((name.encode(), filled(value).encode()) for name, value in error_path.headers)
    body = filled(error_path.body).encode()
    if not any(name == b"content-length" for name, _ in headers):
        headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": error_path.method,
        "scheme": "http",
        "path": error_path.path,
        "raw_path": error_path.path.encode(),
        "root_path": "",
        "query_string": filled(error_path.query).encode(),
        "headers": headers,
        "client": ("203.0.113.9", 40002),
        "server": ("127.0.0.1", 8000),
    }
    return Prepared(scope, body, error_path.status)


async def answer(app: Frontdesk, request: Prepared) -> int:
    """Send one request; the status it was answered with."""
    received = False
    status = 0

    async def receive() -> Message:
        nonlocal received
        if received:
            return {"type": "http.disconnect"}
        received = True
        return {"type": "http.request", "body": request.body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    # A scope of its own each time, as a server makes: the application writes into it.
    scope = {**request.scope, "headers": list(request.scope["headers"]), "state": {}}
    await app(scope, receive, send)
    return status


async def answer_many(app: Frontdesk, request: Prepared, count: int, in_flight: int) -> None:
    """Send ``count`` requests, ``in_flight`` at a time; every one gets the path's status."""
    statuses: list[int] = []

    async def one_after_another(share: int) -> None:
        for _ in range(share):
            statuses.append(await answer(app, request))

    async with anyio.create_task_group() as group:
        for worker in range(in_flight):
            group.start_soon(one_after_another, count // in_flight + (worker < count % in_flight))
    wrong = [status for status in statuses if status != request.status]
    assert not wrong, f"expected {request.status} every time, got {sorted(set(wrong))}"
    assert len(statuses) == count
