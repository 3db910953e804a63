// ws_tsserver serves an MCP server built on the TypeScript SDK's Server
// (@modelcontextprotocol/sdk ships no WebSocket server transport) over
// WebSocket with the ws package (pinned in ../node/package.json): the
// transport below is the few lines the SDK's Transport interface needs,
// one connection at a time, subprotocol "mcp". It prints
// "listening on ws://127.0.0.1:PORT" and serves until killed.
//
//	node ws_tsserver.mjs NODE_MODULES
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const [nodeModules] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Server } = await sdk("server/index.js");
const { CallToolRequestSchema, ListToolsRequestSchema } = await sdk("types.js");
const { WebSocketServer } = createRequire(join(nodeModules, "x.js"))("ws");

class WebSocketServerTransport {
  constructor(socket) {
    this.socket = socket;
  }
  async start() {
    this.socket.on("message", (data) => {
      let m;
      try {
        m = JSON.parse(data.toString());
      } catch (e) {
        this.onerror?.(e);
        return;
      }
      this.onmessage?.(m);
    });
    this.socket.on("close", () => this.onclose?.());
  }
  async send(m) {
    this.socket.send(JSON.stringify(m));
  }
  async close() {
    this.socket.close();
  }
}

function newServer() {
  const server = new Server({ name: "ts-ws-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "echo", description: "Echoes", inputSchema: { type: "object", properties: { message: { type: "string" } } } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => ({
    content: [{ type: "text", text: `ts echo: ${req.params.arguments?.message}` }],
  }));
  return server;
}

const wss = new WebSocketServer({
  host: "127.0.0.1",
  port: 0,
  handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
});
wss.on("connection", (socket) => newServer().connect(new WebSocketServerTransport(socket)));
wss.on("listening", () => console.log(`listening on ws://127.0.0.1:${wss.address().port}/`));
