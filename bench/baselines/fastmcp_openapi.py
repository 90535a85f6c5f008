"""The same backend behind FastMCP: ``FastMCP.from_openapi`` over the backend's OpenAPI
document (json_backend.py), served over Streamable HTTP, stateless with JSON answers (as
the MCP Python SDK baseline is), on FastMCP's own server (uvicorn). FastMCP 4 calls
backends with httpx2, its own requirement.

Run in bench/.venv-fastmcp (bench/fastmcp-requirements.txt):
``python fastmcp_openapi.py --port PORT --backend http://127.0.0.1:BACKEND``.
"""

from __future__ import annotations

import argparse

import httpx2
from fastmcp import FastMCP  # type: ignore[import-not-found,unused-ignore]  # (its own venv)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--backend", required=True)
    args = parser.parse_args()
    document = httpx2.get(f"{args.backend}/openapi.json", timeout=10.0).json()
    client = httpx2.AsyncClient(base_url=args.backend, timeout=10.0)
    server = FastMCP.from_openapi(openapi_spec=document, client=client, name="bench")
    server.run(
        transport="http",
        host="127.0.0.1",
        port=args.port,
        path="/mcp",
        stateless_http=True,
        json_response=True,
        log_level="warning",
        show_banner=False,
    )


if __name__ == "__main__":
    main()
