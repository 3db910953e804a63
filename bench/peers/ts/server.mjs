// The echo server on @modelcontextprotocol/sdk, written as its README
// shows: McpServer.registerTool with a zod schema, StdioServerTransport,
// and StreamableHTTPServerTransport in its stateful pattern (one transport
// per session, on plain node:http). The SDK speaks the legacy era only.
//
//   node server.mjs                              stdio
//   node server.mjs --transport http --port N    Streamable HTTP on 127.0.0.1:N/mcp
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const { values: args } = parseArgs({
  options: { transport: { type: 'string', default: 'stdio' }, port: { type: 'string', default: '8080' } },
});

function newServer() {
  const server = new McpServer({ name: 'ts-echo', version: '0.1.0' });
  server.registerTool('echo',
    { description: 'Echo back the message.', inputSchema: { message: z.string().describe('the text to echo back') } },
    async ({ message }) => ({ content: [{ type: 'text', text: message }] }));
  return server;
}

if (args.transport === 'stdio') {
  await newServer().connect(new StdioServerTransport());
} else if (args.transport === 'http') {
  const transports = new Map();
  const readBody = (req) => new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
  http.createServer(async (req, res) => {
    if (!req.url.startsWith('/mcp')) { res.writeHead(404).end(); return; }
    const sid = req.headers['mcp-session-id'];
    let body;
    if (req.method === 'POST') {
      try { body = JSON.parse(await readBody(req)); } catch { res.writeHead(400).end(); return; }
    }
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport && req.method === 'POST' && !sid && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
      await newServer().connect(transport);
    }
    if (!transport) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, body);
  }).listen(Number(args.port), '127.0.0.1');
} else {
  console.error('--transport must be stdio or http');
  process.exit(2);
}
