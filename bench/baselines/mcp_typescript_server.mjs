// The MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in bench/node/package.json)
// serving `echo` in stateless JSON mode, as the SDK's own stateless example does it: the
// SDK's Express app, and per POST a fresh McpServer and StreamableHTTPServerTransport with
// sessionIdGenerator undefined and enableJsonResponse true (a stateless transport cannot
// be reused across requests).
//
// Run: node bench/baselines/mcp_typescript_server.mjs --port PORT
// The packages live in bench/node/node_modules, so they are resolved from there.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const require = createRequire(new URL('../node/package.json', import.meta.url));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { createMcpExpressApp } = require('@modelcontextprotocol/sdk/server/express.js');
const z = require('zod/v4');

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const port = Number(values.port);

function echoServer() {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Repeats the text it is given.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

const app = createMcpExpressApp({ host: '127.0.0.1' });
app.post('/mcp', async (req, res) => {
  const server = echoServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    }
  }
});

app.listen(port, '127.0.0.1', (error) => {
  if (error) {
    console.error(error);
    process.exit(1);
  }
});
