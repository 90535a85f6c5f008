"""The backend's signing secret: sealed at rest, opened to sign calls, and an unset secret_env
named in the log while the caller sees only that the tool is unavailable."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from sqlalchemy import text

from frontdesk.config import Settings
from frontdesk.tools import signature
from tests.conftest import start_app
from tests.tools.backends import (
    SECRET,
    ScriptedBackend,
    assert_plain_error,
    call_tool,
    company,
    http_tool,
    reply_json,
    text_of,
)
from tests.tools.conftest import Serve

pytestmark = pytest.mark.anyio


def logged(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The JSON lines the service logged so far (the app configures structlog to write them
    to stderr, log_json in the tests' settings)."""
    lines = capsys.readouterr().err.splitlines()
    return [orjson.loads(line) for line in lines if line.startswith("{")]


async def test_a_call_is_signed_with_the_secret_sealed_in_the_database(
    serve: Serve, backend: ScriptedBackend, database_url: str
) -> None:
    """The row holds no secret in clear; the call is still signed with it."""
    backend.routes["/tools"] = reply_json({"text": "done"})
    served = await serve(
        company("initrode", http_tool("lookup", backend.url("/tools"))), database_url=database_url
    )
    query = text("SELECT CAST(definition AS TEXT) FROM companies WHERE tenant_key = 'initrode'")
    async with served.app.services.database.engine.connect() as connection:
        row = str((await connection.execute(query)).scalar_one())
    assert SECRET not in row
    result = await call_tool(served.client, "initrode", "lookup")
    assert result["isError"] is False, result
    [received] = backend.received
    headers = received.headers
    timestamp, given = headers["frontdesk-timestamp"], headers["frontdesk-signature"]
    assert signature.verify(SECRET, timestamp, received.body, given, time.time())


async def test_an_unset_secret_variable_is_named_in_the_log_not_to_the_caller(
    serve: Serve,
    backend: ScriptedBackend,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("INITRODE_BACKEND_SECRET", raising=False)
    tool = http_tool("lookup", backend.url("/tools"), secret_env="INITRODE_BACKEND_SECRET")
    served = await serve(company("initrode", tool))
    result = await call_tool(served.client, "initrode", "lookup")
    assert_plain_error(result, "lookup is unavailable right now.", backend)
    assert "INITRODE_BACKEND_SECRET" not in text_of(result)
    [event] = [line for line in logged(capsys) if line["event"] == "provider_unavailable"]
    assert event["tenant"] == "initrode"
    assert event["item"] == "tool lookup"
    assert event["reason"] == (
        "the environment variable INITRODE_BACKEND_SECRET named by provider.secret_env is not set"
    )


async def test_an_unset_secret_variable_is_a_warning_at_start_up(
    serve: Serve,
    backend: ScriptedBackend,
    make_settings: Callable[..., Settings],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An instance starting on a stored company whose variable it lacks says so at once,
    rather than at the first call."""
    monkeypatch.delenv("INITRODE_BACKEND_SECRET", raising=False)
    tool = http_tool("lookup", backend.url("/tools"), secret_env="INITRODE_BACKEND_SECRET")
    served = await serve(company("initrode", tool))
    capsys.readouterr()
    restarted = await start_app(make_settings(), companies=None)
    await restarted.services.stop()
    [event] = [line for line in logged(capsys) if line["event"] == "company_secret_unset"]
    assert event["level"] == "warning"
    assert event["error"] == (
        "company 'initrode': the environment variable INITRODE_BACKEND_SECRET named by"
        " tools[lookup].provider.secret_env is not set"
    )
    assert served.app.services.settings.database_url == restarted.services.settings.database_url
