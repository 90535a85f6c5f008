// What a desktop MCP client keeps for one sign-in, shared by the TypeScript SDK scripts
// (ts_signin.mjs for the 1.x SDK, ts_modern_signin.mjs for the 2.4 client): an OAuth client
// provider holding everything in memory, and the loopback listener the browser is sent
// back to. Both SDK generations accept the same provider shape.
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";

const CALLBACK_TIMEOUT_MS = 30_000;

// The SDKs' OAuthClientProvider, in memory for this one run. It prints the authorize URL on
// stderr as "authorize: <url>", as a desktop client would open it in the browser.
export class MemoryProvider {
  constructor(redirectUrl, clientName, clientMetadataUrl) {
    this.redirect = redirectUrl;
    this.clientName = clientName;
    this.clientMetadataUrl = clientMetadataUrl;
    this.expectedState = randomBytes(16).toString("hex");
    this.client = undefined;
    this.savedTokens = undefined;
    this.verifier = undefined;
    this.authorizeUrls = [];
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return this.expectedState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client) {
    this.client = client;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(authorizationUrl) {
    this.authorizeUrls.push(authorizationUrl.href);
    console.error(`authorize: ${authorizationUrl.href}`);
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

// The loopback listener the browser is sent back to (RFC 8252 7.3); `done` resolves with the
// redirect's query, or rejects when none arrives in time.
export function listenForCallback(port, redirectUrl) {
  let resolve;
  let reject;
  const arrived = new Promise((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  const server = createServer((request, response) => {
    const query = new URL(request.url, redirectUrl).searchParams;
    response.end("Signed in. You can close this page.");
    resolve(query);
  });
  server.on("error", reject);
  const listening = new Promise((ok) => server.listen(Number(port), "127.0.0.1", ok));
  const timer = setTimeout(() => reject(new Error("no callback arrived")), CALLBACK_TIMEOUT_MS);
  const done = arrived.finally(() => {
    clearTimeout(timer);
    server.close();
  });
  return { listening, done };
}

// The redirect's query, checked as the client must before exchanging its code (RFC 6749
// 10.12: the state it sent; 4.1.2.1: an error comes back instead of a code).
export function checkedCallback(query, provider) {
  if (query.get("state") !== provider.expectedState) throw new Error("state does not match");
  if (query.get("error")) throw new Error(`authorization error: ${query.get("error")}`);
  return query;
}
