"""The MCP Python SDK (``mcp``, pinned in bench/requirements.txt) serving ``echo``.

Its high-level ``MCPServer`` on the streamable HTTP app in stateless JSON mode
(``stateless_http=True, json_response=True``), on uvicorn with uvloop and httptools, as
Frontdesk runs. In 2.x the same app answers two kinds of request:

- handshake-era (``MCP-Protocol-Version`` absent or one of 2024-11-05 .. 2025-11-25): a
  fresh transport and server session per request (``_handle_stateless_request``);
- 2026-07-28 per-request mode (the header names the modern revision and ``params._meta``
  carries the envelope): one request answered directly in the ASGI task.

The driver measures both.
"""

from __future__ import annotations

import argparse
import logging

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench", log_level="WARNING")


@server.tool(description="Repeats the text it is given.", structured_output=False)
async def echo(text: str) -> str:
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    app = server.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1")
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=arguments.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
