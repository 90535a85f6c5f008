"""A signed-in call to the demo company with the MCP Python SDK's OAuth client.

    ./scripts/serve                                  # in another terminal
    .venv/bin/python examples/signed_in_call.py [MCP_URL]

``order_status`` is a personal tool: called as a guest it answers 401, and the SDK's
``OAuthClientProvider`` takes it from there. It reads where to sign in, registers itself,
and opens the consent page in your browser. Allow it and sign in (the demo company's dev
login takes any email address); the browser comes back to this script's listener on a
loopback port with the code, and the SDK exchanges it (PKCE) and calls the tool again as
you. Registration and tokens live in memory, and end with the script.
"""

from __future__ import annotations

import asyncio
import sys
import webbrowser
from collections.abc import Callable
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_types import CallToolResult
from pydantic import AnyUrl

URL = "http://127.0.0.1:8000/v1/demo/mcp"
# How long the customer has to allow and sign in, and the browser to send its request line.
SIGN_IN_SECONDS = 300.0
REQUEST_LINE_SECONDS = 10.0
HTTP_TIMEOUT_SECONDS = 30.0


class MemoryStorage:
    """Where the SDK keeps its registration and tokens (a real client would persist them)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class LoopbackCallback:
    """A one-shot listener on 127.0.0.1 for the browser's return (RFC 8252 7.3)."""

    def __init__(self) -> None:
        self.redirect_uri = ""
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> LoopbackCallback:
        self._result = asyncio.get_running_loop().create_future()
        # Port 0: any free port. The authorization server does not compare a loopback
        # redirect URI's port (RFC 8252 7.3), yet this one is registered all the same.
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.redirect_uri = f"http://127.0.0.1:{port}/callback"
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()

    async def code(self) -> AuthorizationCodeResult:
        """The code, state and issuer the browser brought back (the SDK checks them)."""
        assert self._result is not None
        return await asyncio.wait_for(self._result, SIGN_IN_SECONDS)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), REQUEST_LINE_SECONDS)
            came_back = self._take(line)
            status = "200 OK" if came_back else "404 Not Found"
            text = "Done. You can close this tab." if came_back else "Not here."
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Connection: close\r\n\r\n{text}\n".encode()
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass  # a browser that sent nothing in time, or went away: the sign-in waits on
        finally:
            writer.close()

    def _take(self, request_line: bytes) -> bool:
        """Hand the SDK what the browser brought back; False for any other request."""
        # "GET /callback?code=...&state=...&iss=... HTTP/1.1"
        parts = request_line.decode("latin-1").split(" ")
        target = urlsplit(parts[1] if len(parts) == 3 else "")
        query = {name: values[0] for name, values in parse_qs(target.query).items()}
        if target.path != "/callback" or not {"code", "error"} & query.keys():
            return False
        if self._result is not None and not self._result.done():
            if "code" in query:
                self._result.set_result(
                    AuthorizationCodeResult(
                        code=query["code"], state=query.get("state"), iss=query.get("iss")
                    )
                )
            else:
                # RFC 6749 4.1.2.1: the customer said no, or the server refused the request.
                self._result.set_exception(PermissionError(f"not signed in: {query['error']}"))
        return True


async def main(
    url: str = URL, open_browser: Callable[[str], object] = webbrowser.open
) -> CallToolResult:
    async with LoopbackCallback() as callback:

        async def send_to_consent_page(authorize_url: str) -> None:
            print(f"Sign in at: {authorize_url}", flush=True)
            open_browser(authorize_url)

        provider = OAuthClientProvider(
            url,
            OAuthClientMetadata(
                client_name="Frontdesk example", redirect_uris=[AnyUrl(callback.redirect_uri)]
            ),
            MemoryStorage(),
            redirect_handler=send_to_consent_page,
            callback_handler=callback.code,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=HTTP_TIMEOUT_SECONDS) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            result = await client.call_tool("order_status", {"order_id": "latest"})
            print(result.structured_content)
            return result


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else URL))
