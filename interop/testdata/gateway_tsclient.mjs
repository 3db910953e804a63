// gateway_tsclient drives `ferry serve` with the TypeScript SDK's
// Streamable HTTP client: the aggregated endpoint and one server's own,
// and a sampling request of server-everything answered by this client's
// own model. It prints one JSON line summing up what it saw;
// gateway_test.go checks every field.
//
//	node gateway_tsclient.mjs NODE_MODULES BASE_URL WHO
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, base, who] = process.argv.slice(2);
if (!nodeModules || !base || !who) {
  console.error("usage: gateway_tsclient.mjs NODE_MODULES BASE_URL WHO");
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CreateMessageRequestSchema } = await sdk("types.js");

const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ error: "timed out" }));
  process.exit(3);
}, 60_000);

const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const summary = { who };

async function connect(path) {
  const client = new Client({ name: "ferry-interop-gateway-" + who, version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    role: "assistant",
    model: who + "-model",
    content: { type: "text", text: who + " answers: " + (req.params.messages[0]?.content?.text ?? "") },
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(base + path)));
  return client;
}

try {
  const all = await connect("/mcp");
  summary.protocolVersion = all.transport?.protocolVersion ?? null;
  summary.serverName = all.getServerVersion()?.name;
  const tools = (await all.listTools()).tools.map((t) => t.name);
  summary.aggregatedTools = tools.length;
  summary.hasEverythingEcho = tools.includes("everything__echo");
  summary.hasMemoryReadGraph = tools.includes("memory__read_graph");
  summary.echo = text(await all.callTool({ name: "everything__echo", arguments: { message: "from " + who } }));
  summary.sampled = text(await all.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: who + "'s question", maxTokens: 5 } }));
  await all.close();

  const memory = await connect("/servers/memory/mcp");
  const own = (await memory.listTools()).tools.map((t) => t.name);
  summary.memoryTools = own.includes("read_graph") && own.includes("create_entities") && !own.some((n) => n.includes("__"));
  await memory.callTool({ name: "create_entities", arguments: { entities: [{ name: who, entityType: "person", observations: ["met through ferry"] }] } });
  summary.graph = text(await memory.callTool({ name: "read_graph", arguments: {} }));
  await memory.close();
} catch (e) {
  summary.error = String(e?.stack ?? e);
}
clearTimeout(watchdog);
console.log(JSON.stringify(summary));
process.exit(0);
