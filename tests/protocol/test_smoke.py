"""A first end-to-end check that the fixtures serve the test company."""

from __future__ import annotations

import httpx


async def test_tools_list_serves_the_companys_tools(client: httpx.AsyncClient) -> None:
    """tools/list answers with every tool the companies file declares, by name."""
    response = await client.post(
        "/v1/acme/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )
    assert response.status_code == 200
    names = [tool["name"] for tool in response.json()["result"]["tools"]]
    assert names[:3] == ["add", "crash", "echo"]
