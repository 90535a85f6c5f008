// A real OpenID Connect provider (npm `oidc-provider`) for Frontdesk's tests.
//
// Usage:  OIDC_CONFIG=/path/config.json OIDC_PORT=0 node server.mjs
//         (the port may also be given as the first argument; 0 = any free port)
//
// The config file is JSON:
//   {
//     "clients":  [{ "client_id", "client_secret", "redirect_uris", "token_endpoint_auth_method", ...any
//                   other client metadata oidc-provider accepts }],
//     "accounts": [{ "sub", "email", "email_verified", "name", ...other standard claims }],
//     "require_pkce": true            // optional, default true
//   }
//
// Once listening it prints exactly one line `READY http://127.0.0.1:<port>` on stdout; that URL is the
// issuer. Everything else (oidc-provider's development warnings, errors) goes to stderr.
//
// Login uses the built-in development interactions: the "login" field is taken as the `sub` of a
// configured account and the password is ignored. An unknown `sub` makes the authorization request
// fail with `error=access_denied` at the client's redirect_uri (see findAccount below).

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import process from 'node:process';

import Provider, { errors } from 'oidc-provider';

function fail(message) {
  process.stderr.write(`oidc test provider: ${message}\n`);
  process.exit(2);
}

const configPath = process.env.OIDC_CONFIG;
if (!configPath) fail('OIDC_CONFIG must name a JSON config file');

const portText = process.argv[2] ?? process.env.OIDC_PORT ?? '0';
const requestedPort = Number(portText);
if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
  fail(`invalid port ${JSON.stringify(portText)}`);
}

let config;
try {
  config = JSON.parse(readFileSync(configPath, 'utf8'));
} catch (err) {
  fail(`cannot read ${configPath}: ${err.message}`);
}
const clients = config.clients ?? [];
const requirePkce = config.require_pkce ?? true;
const accounts = new Map();
for (const { sub, ...claims } of config.accounts ?? []) {
  if (typeof sub !== 'string' || sub === '') fail('every account needs a non-empty string "sub"');
  accounts.set(sub, claims);
}

// A fresh RS256 key per run: tests must fetch the JWKS like a real relying party would, and
// supplying our own key also avoids oidc-provider's shared, publicly known development key.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: randomBytes(8).toString('hex'),
  alg: 'RS256',
  use: 'sig',
};

function buildProvider(issuer) {
  return new Provider(issuer, {
    clients,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },

    // Which claims each scope releases. oidc-provider filters account claims through this map.
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: [
        'name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username',
        'profile', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at',
      ],
    },
    // By default (conform mode) claims requested only via scope are released from the userinfo
    // endpoint, not the id_token, whenever an access token is also issued (i.e. the code flow).
    // Frontdesk reads identity from the id_token, so put scope claims there too.
    conformIdTokenClaims: false,

    // oidc-provider only enforces PKCE for public clients by default; a code_challenge sent by a
    // confidential client is still verified. Requiring it everywhere catches a relying party that
    // forgets to send it. Only S256 is supported by this oidc-provider major.
    pkce: { required: () => requirePkce },

    features: {
      devInteractions: { enabled: true },
    },

    async findAccount(_ctx, sub) {
      const claims = accounts.get(sub);
      if (claims === undefined) {
        // Returning undefined would leave the session "logged in" as nobody, so the login prompt
        // would repeat forever. Failing loudly gives tests a deterministic error instead.
        throw new errors.AccessDenied(`unknown test account ${JSON.stringify(sub)}`);
      }
      return {
        accountId: sub,
        async claims() {
          return { sub, ...claims };
        },
      };
    },
  });
}

let handler = (_req, res) => {
  res.writeHead(503).end('starting');
};
const server = createServer((req, res) => handler(req, res));

server.on('error', (err) => fail(`cannot listen: ${err.message}`));
server.listen(requestedPort, '127.0.0.1', async () => {
  // The issuer must contain the real port, which is only known now when port 0 was requested.
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let provider;
  try {
    provider = buildProvider(issuer);
    // Static clients are only validated when first used; a bad registration would otherwise
    // surface as an error page in the middle of a test instead of here.
    for (const { client_id: clientId } of clients) {
      await provider.Client.find(clientId);
    }
  } catch (err) {
    const detail = err.error_description ? `${err.message}: ${err.error_description}` : err.message;
    fail(`invalid configuration: ${detail}`);
  }
  provider.on('server_error', (_ctx, err) => {
    process.stderr.write(`oidc test provider server_error: ${err.stack ?? err}\n`);
  });
  handler = provider.callback();
  process.stdout.write(`READY ${issuer}\n`);
});

function shutdown() {
  // Keep-alive connections from test clients would otherwise hold close() open.
  server.closeAllConnections();
  server.close(() => process.exit(0));
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
