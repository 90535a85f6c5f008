"""No token or code in any log line (DESIGN: tokens; README: logs never hold query
strings). A whole sign-in, its refresh and revocation, MCP calls and the usual mistakes
run with the access log on and every logger at DEBUG; every line the service writes,
through structlog or the standard library, is searched for every secret it handed out."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import httpx
import pytest
import structlog

from frontdesk.app import Frontdesk
from frontdesk.config import Settings
from frontdesk.oauth import token
from frontdesk.oauth.flow import COOKIE_NAME
from tests.conftest import BASE_URL, start_app
from tests.oauth import flows
from tests.tools.backends import call_tool, company, http_tool, reply_json
from tests.tools.conftest import scripted_backend

pytestmark = pytest.mark.anyio


@dataclass
class Captured:
    """Every line logged while the test runs."""

    stderr: pytest.CaptureFixture[str]
    records: list[str] = field(default_factory=list)
    written: str = ""

    def structlog_output(self) -> str:
        """What the service wrote to stderr (where structlog writes) so far."""
        self.written += self.stderr.readouterr().err
        return self.written

    def lines(self) -> list[str]:
        return [*self.structlog_output().splitlines(), *self.records]


class _Keep(logging.Handler):
    def __init__(self, captured: Captured) -> None:
        super().__init__(logging.DEBUG)
        self._captured = captured

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("httpx") and record.getMessage().startswith(
            f"HTTP Request: {record.args[0] if isinstance(record.args, tuple) else ''} {BASE_URL}"
        ):
            # The test's own client calling the service in-process: not the service's log.
            return
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self._captured.records.append(f"{record.name} {record.levelname} {text}")


def _structlog_modules() -> Iterator[ModuleType]:
    for name, module in list(sys.modules.items()):
        if name.startswith("frontdesk") and module is not None and hasattr(module, "log"):
            yield module


@pytest.fixture
def captured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Captured]:
    """structlog's output and every stdlib record from DEBUG up, for this test only."""
    # structlog writes to whatever sys.stderr is when a line is written: capsys's here.
    captured = Captured(capsys)
    for module in _structlog_modules():
        # Module loggers cache their configuration (its level) on first use: fresh ones
        # take ours.
        monkeypatch.setattr(module, "log", structlog.get_logger(module.__name__))
    root = logging.getLogger()
    handler = _Keep(captured)
    root.addHandler(handler)
    # SQLAlchemy quiets its own loggers to WARNING; an operator debugging SQL would not.
    levels = {name: logging.getLogger(name).level for name in ("", "sqlalchemy")}
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        yield captured
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        structlog.reset_defaults()


@pytest.fixture
async def chatty_app(captured: Captured, make_settings: Callable[..., Settings]) -> Frontdesk:
    return await start_app(make_settings(access_log=True, log_level="DEBUG", log_json=True))


def secret_pieces(secret: str) -> list[str]:
    """The secret, and a 16-character piece of its random part (a clipped copy)."""
    random_part = secret.split("_", 1)[-1] if secret.startswith("fd") else secret
    return [secret, random_part[:16], random_part[-16:]]


async def test_a_whole_sign_in_leaves_no_secret_in_any_log_line(
    captured: Captured, chatty_app: Frontdesk
) -> None:
    """No code, token, verifier, flow, nonce, state or session MAC in any log line."""
    transport = httpx.ASGITransport(app=chatty_app, client=("203.0.113.9", 40002))
    secrets: list[str] = []
    try:
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            secrets += await _run_everything(client)
    finally:
        await chatty_app.services.stop()

    # Control: a value logged by a service module, and one through the standard library,
    # are both found, so the search below would find a leak.
    token.log.info("canary", value="canary-structlog-0f1e")
    logging.getLogger("frontdesk.canary").debug("canary-stdlib-%s", "9a8b")
    lines = captured.lines()
    assert any("canary-structlog-0f1e" in line for line in lines)
    assert any("canary-stdlib-9a8b" in line for line in lines)
    structlog_lines = captured.structlog_output()
    # The capture saw the service talk: access lines, events, and stdlib records.
    assert '"event":"request"' in structlog_lines
    assert '"event":"tokens_issued"' in structlog_lines
    assert '"event":"signin_completed"' in structlog_lines
    assert '"level":"debug"' in structlog_lines or captured.records
    assert any(record.startswith("sqlalchemy.engine") for record in captured.records)
    for secret in secrets:
        for piece in secret_pieces(secret):
            leaks = [line for line in lines if piece in line]
            assert not leaks, (piece, leaks[:3])


async def _run_everything(client: httpx.AsyncClient) -> list[str]:
    """Sign in, refresh, revoke, call tools, and make the usual mistakes; every secret."""
    secrets: list[str] = []
    client_id = await flows.register(client)
    state = "st-" + flows.Pkce.new().verifier[:24]
    pkce = flows.Pkce.new()
    page = await flows.consent_page(client, client_id, pkce, state=state)
    consent_flow = flows.flow_of(page)
    nonce = client.cookies.get(COOKIE_NAME, path="/v1/initech/oauth")
    assert nonce
    allowed = await flows.decide(client, consent_flow)
    login_page = await client.get(allowed.headers["location"])
    login_flow = flows.form_of(login_page.text).inputs["flow"]
    back = await flows.dev_login(client, allowed)
    code = flows.redirect_params(back)["code"]
    signed_in = flows.SignIn(
        client_id, code, state, flows.issuer(), pkce, flows.REDIRECT_URI, flows.TENANT
    )
    secrets += [state, pkce.verifier, consent_flow, login_flow, nonce, code]

    # Mistakes before the exchange: a wrong verifier.
    await flows.exchange(client, signed_in, code_verifier=flows.Pkce.new().verifier)
    first = flows.tokens_of(await flows.exchange(client, signed_in), client_id)
    secrets += [first.access, first.refresh]

    # MCP: initialize, a session, tools as the customer, a forged and an unknown token.
    initialized = await flows.mcp(
        client,
        flows.rpc(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
        ),
        token=first.access,
    )
    session_id = initialized.headers["mcp-session-id"]
    secrets += [session_id, session_id.rpartition(".")[2]]
    await client.post(
        "/v1/initech/mcp",
        json=flows.rpc("tools/list"),
        headers={"mcp-session-id": session_id, "authorization": f"Bearer {first.access}"},
    )
    await flows.whoami_result(client, first.access)
    forged = "fdat_" + flows.Pkce.new().verifier[:43]
    secrets.append(forged)
    await flows.whoami(client, forged)
    await flows.mcp(client, flows.tool_call("crash"), "acme", token=first.access)
    await flows.mcp(client, flows.tool_call("crash"), "acme")
    await client.post("/v1/initech/mcp", json=flows.rpc("ping"), headers={"mcp-session-id": "x.y"})

    # Refresh, reuse of the spent refresh token (revokes the family), revoke.
    second = flows.tokens_of(await flows.refresh(client, first), client_id)
    secrets += [second.access, second.refresh]
    await flows.refresh(client, first)
    await flows.whoami(client, second.access)
    third = await flows.obtain_tokens(client, client_id=client_id)
    secrets += [third.access, third.refresh]
    await flows.revoke(client, third.refresh, client_id)
    await flows.revoke(client, third.access, client_id)
    await flows.whoami(client, third.access)
    # The code again (replay), and with another client.
    await flows.exchange(client, signed_in)
    await flows.token_request(client, {**flows.code_form(signed_in), "client_id": "fdc_nobody"})
    return secrets


async def test_no_identity_token_sent_to_a_companys_api_is_in_any_log_line(
    captured: Captured, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    """A signed-in customer's calls of a tool with ``identity: jwt``, answered, refused (401)
    and failing (500) by the API, with every logger at DEBUG: none of the JWTs the API
    received is in a log line, whole or in part (its claims and its signature)."""
    with scripted_backend() as backend:
        backend.routes["/ok"] = reply_json({"text": "ok"})
        backend.routes["/refuses"] = reply_json({"error": "invalid_token"}, 401)
        backend.routes["/fails"] = reply_json({"error": "boom"}, 500)
        tools = []
        for name in ("ok", "refuses", "fails"):
            tool = http_tool(name, backend.url(f"/{name}"), access="personal")
            tool["provider"]["identity"] = "jwt"
            tools.append(tool)
        path = tmp_path / "companies.json"
        path.write_text(json.dumps({"companies": [company("initrode", *tools, signin=True)]}))
        settings = make_settings(
            access_log=True, log_level="DEBUG", backend_allowed_networks=["127.0.0.0/8"]
        )
        app = await start_app(settings, path)
        transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40002))
        try:
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                tokens = await flows.obtain_tokens(client, "initrode")
                for name in ("ok", "refuses", "fails"):
                    await call_tool(client, "initrode", name, token=tokens.access)
        finally:
            await app.services.stop()
    sent = [received.headers["authorization"].split(" ", 1)[1] for received in backend.received]
    assert len(sent) == 3
    lines = captured.lines()
    assert any('"event":"tool_backend_failed"' in line for line in lines)
    for token_sent in sent:
        _header, claims, signature = token_sent.split(".")
        for piece in (token_sent, claims[:24], claims[-24:], signature[:24], signature[-24:]):
            leaks = [line for line in lines if piece in line]
            assert not leaks, (piece, leaks[:3])
