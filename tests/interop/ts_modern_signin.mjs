// The MCP TypeScript client 2.4 (npm @modelcontextprotocol/client), pinned to 2026-07-28,
// signing a customer in at a Frontdesk company with its OAuth client and calling a personal
// tool. Usage: node ts_modern_signin.mjs <mcp-url> <callback-port>
//
// As ts_signin.mjs does for the 1.x SDK: listens on http://127.0.0.1:<callback-port>/callback,
// calls whoami as a guest, and on the 401 the client discovers the authorization server,
// registers and asks for the browser ("authorize: <url>" on stderr). The redirect's query goes
// to finishAuth (which checks iss, RFC 9207), whoami is called again, then once more with an
// access token the server never issued so that the client refreshes by itself. Prints what it
// saw, and every HTTP request it made, as one JSON document on stdout.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { MemoryProvider, checkedCallback, listenForCallback } from "./oauth_desk.mjs";

const MODERN = "2026-07-28";
const [url, port] = process.argv.slice(2);
if (!url || !port) {
  console.error("usage: node ts_modern_signin.mjs <mcp-url> <callback-port>");
  process.exit(2);
}
const redirectUrl = `http://127.0.0.1:${port}/callback`;

const traffic = [];
async function recordingFetch(input, init) {
  const target = new URL(input instanceof Request ? input.url : input);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  const response = await fetch(input, init);
  traffic.push({
    method: init?.method ?? (input instanceof Request ? input.method : "GET"),
    path: target.pathname,
    status: response.status,
    protocolVersion: headers.get("mcp-protocol-version"),
    mcpMethod: headers.get("mcp-method"),
    mcpName: headers.get("mcp-name"),
    bearer: (headers.get("authorization") ?? "").startsWith("Bearer "),
    sessionId: response.headers.get("mcp-session-id"),
  });
  return response;
}

const provider = new MemoryProvider(redirectUrl, "Frontdesk TypeScript client 2.4 tests");
const callback = listenForCallback(port, redirectUrl);
await callback.listening;
const client = new Client(
  { name: "frontdesk-ts-modern-signin", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: MODERN } } },
);
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
await transport.finishAuth(query);
const signedIn = await client.callTool({ name: "whoami", arguments: {} });
const firstTokens = provider.savedTokens;

provider.savedTokens = { ...firstTokens, access_token: "not-issued-by-frontdesk" };
const afterRefresh = await client.callTool({ name: "whoami", arguments: {} });
const refreshedTokens = provider.savedTokens;
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
