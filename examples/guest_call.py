"""A guest's call to the demo company with the MCP Python SDK (./scripts/serve first)."""

import asyncio

from mcp import Client


async def main(url: str = "http://127.0.0.1:8000/v1/demo/mcp") -> None:
    async with Client(url) as client:
        result = await client.call_tool("search_products", {"query": "chocolate"})
        print(result.structured_content)


if __name__ == "__main__":
    asyncio.run(main())
