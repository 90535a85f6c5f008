// The MCP TypeScript SDK's own OAuth client signing a customer in at a Frontdesk company.
// Usage: node ts_signin.mjs <mcp-url> <callback-port> [client-metadata-url]
//
// Listens on http://127.0.0.1:<callback-port>/callback and calls whoami as a guest. On the 401
// the SDK discovers the authorization server, registers (or, given a client metadata URL and a
// server that supports them, uses that URL as its client id) and asks for the browser: this
// script prints "authorize: <url>" on stderr, as a desktop client would open it, and waits for
// the redirect. The code is exchanged (finishAuth), whoami is called again; then the access
// token is replaced with one the server never issued, so the next call is refused and the SDK
// refreshes by itself. Prints what it saw as one JSON document on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MemoryProvider, checkedCallback, listenForCallback } from "./oauth_desk.mjs";

const [url, port, clientMetadataUrl] = process.argv.slice(2);
if (!url || !port) {
  console.error("usage: node ts_signin.mjs <mcp-url> <callback-port> [client-metadata-url]");
  process.exit(2);
}
const redirectUrl = `http://127.0.0.1:${port}/callback`;

const traffic = [];
async function recordingFetch(input, init) {
  const response = await fetch(input, init);
  const method = init?.method ?? (input instanceof Request ? input.method : "GET");
  traffic.push({ method, path: new URL(input instanceof Request ? input.url : input).pathname, status: response.status });
  return response;
}

const provider = new MemoryProvider(redirectUrl, "Frontdesk TypeScript SDK tests", clientMetadataUrl);
const callback = listenForCallback(port, redirectUrl);
await callback.listening;
const client = new Client({ name: "frontdesk-ts-signin", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  authProvider: provider,
  fetch: recordingFetch,
});
await client.connect(transport);

let challenged = false;
try {
  await client.callTool({ name: "whoami", arguments: {} });
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  challenged = true;
}
if (!challenged) throw new Error("whoami as a guest was not challenged");

const query = checkedCallback(await callback.done, provider);
await transport.finishAuth(query.get("code"));
const signedIn = await client.callTool({ name: "whoami", arguments: {} });
const firstTokens = provider.savedTokens;

provider.savedTokens = { ...firstTokens, access_token: "not-issued-by-frontdesk" };
const afterRefresh = await client.callTool({ name: "whoami", arguments: {} });
const refreshedTokens = provider.savedTokens;

await transport.terminateSession();
await client.close();

console.log(
  JSON.stringify({
    clientId: provider.client?.client_id ?? null,
    authorizeUrls: provider.authorizeUrls,
    iss: query.get("iss"),
    signedIn,
    afterRefresh,
    refreshed: refreshedTokens.refresh_token !== firstTokens.refresh_token,
    traffic,
  }),
);
