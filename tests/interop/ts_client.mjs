// The MCP TypeScript SDK's own client against a Frontdesk MCP endpoint.
// Usage: node ts_client.mjs <mcp-url>
// Connects over Streamable HTTP, lists the tools, calls echo and search_products, ends the
// session, and prints what it saw as one JSON document on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url] = process.argv.slice(2);
if (!url) {
  console.error("usage: node ts_client.mjs <mcp-url>");
  process.exit(2);
}

const client = new Client({ name: "frontdesk-ts-interop", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

const sessionId = transport.sessionId ?? null;
const protocolVersion = transport.protocolVersion ?? null;
const { tools } = await client.listTools();
const echo = await client.callTool({ name: "echo", arguments: { text: "hi" } });
// The SDK checks structuredContent against the tool's outputSchema from the listing.
const search = await client.callTool({ name: "search_products", arguments: { query: "chocolate" } });

await transport.terminateSession();
await client.close();

console.log(
  JSON.stringify({
    serverVersion: client.getServerVersion(),
    serverCapabilities: client.getServerCapabilities(),
    protocolVersion,
    sessionId,
    tools,
    echo,
    search,
  }),
);
