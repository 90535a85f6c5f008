// The MCP TypeScript client 2.4 (npm @modelcontextprotocol/client) pinned to 2026-07-28
// against a Frontdesk MCP endpoint, as a guest.
// Usage: node ts_modern_client.mjs <mcp-url>
// Lists the tools, calls echo and search_products, and prints what it saw (and every HTTP
// request it made) as one JSON document on stdout.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const MODERN = "2026-07-28";
const [url] = process.argv.slice(2);
if (!url) {
  console.error("usage: node ts_modern_client.mjs <mcp-url>");
  process.exit(2);
}

const traffic = [];
const recordingFetch = async (input, init) => {
  const headers = new Headers(init?.headers);
  const response = await fetch(input, init);
  traffic.push({
    method: init?.method ?? "GET",
    protocolVersion: headers.get("mcp-protocol-version"),
    mcpMethod: headers.get("mcp-method"),
    mcpName: headers.get("mcp-name"),
    status: response.status,
    sessionId: response.headers.get("mcp-session-id"),
  });
  return response;
};

const client = new Client(
  { name: "frontdesk-ts-modern-interop", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: MODERN } } },
);
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
await client.connect(transport);

const { tools } = await client.listTools();
const echo = await client.callTool({ name: "echo", arguments: { text: "hi" } });
// The client checks structuredContent against the tool's outputSchema from the listing.
const search = await client.callTool({ name: "search_products", arguments: { query: "chocolate" } });
await client.close();

console.log(
  JSON.stringify({
    serverVersion: client.getServerVersion() ?? null,
    serverCapabilities: client.getServerCapabilities() ?? null,
    tools,
    echo,
    search,
    traffic,
  }),
);
