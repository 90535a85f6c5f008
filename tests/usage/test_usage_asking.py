"""A call that needs the client to answer a question it cannot is counted as
``unsupported_client``, in both revisions: refused before it runs (a tool that declares the
capability it needs), or after it asked (a tool that happened to ask)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from frontdesk.config import Settings
from frontdesk.protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from tests.conftest import BASE_URL, start_app
from tests.protocol.test_asking import UMBRELLA, post_modern
from tests.usage.support import errors, figures, usage_now

pytestmark = pytest.mark.anyio


async def test_a_client_that_cannot_answer_is_counted_as_unsupported(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    path = tmp_path / "companies.json"
    path.write_text(json.dumps({"companies": [UMBRELLA]}), encoding="utf-8")
    app = await start_app(make_settings(), path)
    try:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:

            async def call_2025(name: str) -> None:
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}
                response = await client.post("/v1/umbrella/mcp", json=body)
                assert response.json()["result"]["isError"] is True

            # summary declares it needs sampling; letter asks without declaring it.
            await call_2025("summary")
            await call_2025("letter")
            refused = await post_modern(client, "tools/call", {"name": "summary"}, {})
            error = refused.json()["error"]
            assert error["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
            # A client that can answer: the tool asked, as it should.
            asked = await post_modern(client, "tools/call", {"name": "letter"})
            assert asked.json()["result"]["resultType"] == "input_required"

        assert await app.services.usage.flush()
        report = await usage_now(app, "umbrella")
        summary = figures(report, "summary")
        assert (summary["calls"], errors(summary)) == (2, {"unsupported_client": 2})
        # Refused before it ran: no latency.
        assert summary["latency_ms"]["timed_calls"] == 0
        letter = figures(report, "letter")
        assert (letter["calls"], letter["ok"], errors(letter)) == (2, 1, {"unsupported_client": 1})
        assert letter["latency_ms"]["timed_calls"] == 2
    finally:
        await app.services.stop()
