"""A customer signed in to the orders company by the MCP Python SDK's own OAuth client
(registration, the dev login in a scripted browser, the code exchange), calling one tool."""

from __future__ import annotations

from typing import Any

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from tests.live.conftest import LiveService
from tests.live.test_signin_sdk import REDIRECT_URI, DevLoginBrowser, MemoryStorage


async def signed_in_call(
    service: LiveService, tenant_key: str, tool: str, arguments: dict[str, Any]
) -> tuple[Any, MemoryStorage]:
    """The tool's result for a customer the SDK signed in, and the SDK's storage (which
    holds the client it registered)."""
    url = service.mcp_url(tenant_key)
    storage = MemoryStorage()
    browser = DevLoginBrowser()
    provider = OAuthClientProvider(
        url,
        OAuthClientMetadata(redirect_uris=[AnyUrl(REDIRECT_URI)], client_name="Orders"),
        storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30.0) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool(tool, arguments), storage
