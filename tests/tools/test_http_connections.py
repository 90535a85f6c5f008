"""Backend calls share one connection pool: connections are reused across calls, and a slow
backend holds only its own calls (app.py Services.backends, tools/http.py)."""

from __future__ import annotations

import anyio
import pytest

from tests.tools.backends import (
    DEADLINE,
    Json,
    ScriptedBackend,
    call_tool,
    company,
    http_tool,
    reply_after_release,
    reply_json,
)
from tests.tools.conftest import Serve

pytestmark = pytest.mark.anyio


async def test_sequential_calls_reuse_one_connection(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Twenty calls in a row to one backend open at most two TCP connections."""
    backend.routes["/tools"] = reply_json({"text": "again"})
    served = await serve(company("initrode", http_tool("lookup", backend.url("/tools"))))
    for _ in range(20):
        result = await call_tool(served.client, "initrode", "lookup")
        assert result["isError"] is False
    assert len(backend.received) == 20
    assert 1 <= backend.connections <= 2


async def test_calls_of_two_companies_to_one_backend_share_the_pool(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """The pool is per Frontdesk instance, not per company or tool."""
    backend.routes["/a"] = reply_json({"text": "a"})
    backend.routes["/b"] = reply_json({"text": "b"})
    served = await serve(
        company("initrode", http_tool("lookup", backend.url("/a"))),
        company("vandelay", http_tool("lookup", backend.url("/b"))),
    )
    for _ in range(5):
        for tenant in ("initrode", "vandelay"):
            assert (await call_tool(served.client, tenant, "lookup"))["isError"] is False
    assert len(backend.received) == 10
    assert backend.connections <= 2


async def test_a_slow_backend_does_not_hold_up_another_companys_calls(
    serve: Serve, backend: ScriptedBackend, other_backend: ScriptedBackend
) -> None:
    """While one company's backend sits on a call, another company's calls are answered."""
    backend.routes["/tools"] = reply_after_release(reply_json({"text": "slow, but here"}))
    other_backend.routes["/tools"] = reply_json({"text": "quick"})
    served = await serve(
        company("slowco", http_tool("report", backend.url("/tools"), timeout=60)),
        company("fastco", http_tool("lookup", other_backend.url("/tools"))),
    )
    slow: list[Json] = []

    async def call_slow() -> None:
        slow.append(await call_tool(served.client, "slowco", "report"))

    with anyio.fail_after(DEADLINE * 2):
        async with anyio.create_task_group() as group:
            group.start_soon(call_slow)
            await backend.requests_arrived(1)
            for _ in range(5):
                fast = await call_tool(served.client, "fastco", "lookup")
                assert fast == {"content": [{"type": "text", "text": "quick"}], "isError": False}
            assert slow == []
            backend.release.set()
    assert slow == [{"content": [{"type": "text", "text": "slow, but here"}], "isError": False}]


async def test_concurrent_calls_to_one_backend_are_answered_together(
    serve: Serve, backend: ScriptedBackend
) -> None:
    """Ten calls held at once by the backend all complete when it lets them go."""
    backend.routes["/tools"] = reply_after_release(reply_json({"text": "together"}))
    served = await serve(company("initrode", http_tool("lookup", backend.url("/tools"))))
    results: list[Json] = []

    async def call() -> None:
        results.append(await call_tool(served.client, "initrode", "lookup"))

    with anyio.fail_after(DEADLINE * 2):
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(call)
            await backend.requests_arrived(10)
            assert results == []
            backend.release.set()
    assert len(results) == 10
    assert all(result["isError"] is False for result in results)
