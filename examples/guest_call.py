"""A guest's call to the demo company with the MCP Python SDK (./scripts/serve first).

.venv/bin/python examples/guest_call.py [MCP_URL]
"""

import asyncio
import sys

from mcp import Client

URL = "http://127.0.0.1:8000/v1/demo/mcp"


async def main(url: str = URL) -> None:
    async with Client(url) as client:
        result = await client.call_tool("search_products", {"query": "chocolate"})
        print(result.structured_content)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else URL))
