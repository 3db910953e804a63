// sse_tsclient drives ferry's HTTP+SSE transport (transport/sse.Handler)
// with the TypeScript SDK's legacy SSEClientTransport and prints one JSON
// line summing up what it saw; sse_test.go checks every field.
//
//	node sse_tsclient.mjs NODE_MODULES URL [PROTOCOL_VERSION]
//
// PROTOCOL_VERSION, when given, replaces the version the SDK's Client
// proposes in initialize (its latest), e.g. 2024-11-05, the revision that
// defined the transport.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, url, pinVersion] = process.argv.slice(2);
if (!nodeModules || !url) {
  console.error("usage: sse_tsclient.mjs NODE_MODULES URL [PROTOCOL_VERSION]");
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { SSEClientTransport } = await sdk("client/sse.js");
const { CreateMessageRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema } = await sdk("types.js");

const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ error: "timed out" }));
  process.exit(3);
}, 30_000);

const summary = {};
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const client = new Client(
  { name: "ferry-interop-sse", version: "1.0.0" },
  { capabilities: { sampling: {}, roots: { listChanged: true } } },
);
let samplings = 0;
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  samplings++;
  return {
    role: "assistant",
    model: "ts-canned-model",
    content: { type: "text", text: "sampled by ts: " + (req.params.messages[0]?.content?.text ?? "") },
  };
});
let rootsRequests = 0;
client.setRequestHandler(ListRootsRequestSchema, async () => {
  rootsRequests++;
  return { roots: [{ uri: "file:///tmp/sse-root", name: "sse root" }] };
});
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(`${n.params.level}:${n.params.data}`));

const transport = new SSEClientTransport(new URL(url));
// Record the endpoint event and the protocol version on the way, and pin
// the version when asked.
const send = transport.send.bind(transport);
transport.send = (msg) => {
  if (pinVersion && msg.method === "initialize") {
    msg = { ...msg, params: { ...msg.params, protocolVersion: pinVersion } };
  }
  return send(msg);
};
const wireProgress = [];
let inner;
Object.defineProperty(transport, "onmessage", {
  configurable: true,
  get: () => inner,
  set: (fn) => {
    inner = (msg, extra) => {
      if (msg?.result?.protocolVersion && msg.result.serverInfo) summary.protocolVersion = msg.result.protocolVersion;
      if (msg?.method === "notifications/progress") wireProgress.push(msg.params.progress);
      return fn?.(msg, extra);
    };
  },
});

try {
  await client.connect(transport);
  const endpoint = transport._endpoint;
  summary.endpointPath = endpoint?.pathname;
  summary.endpointHasSession = /^[A-Za-z0-9_-]{16,}$/.test(endpoint?.searchParams.get("sessionId") ?? "");
  summary.serverName = client.getServerVersion()?.name;
  summary.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  summary.echo = text(await client.callTool({ name: "echo", arguments: { message: "hello over sse\nline 2" } }));
  const progress = [];
  const count = await client.callTool({ name: "count", arguments: { n: 4, delayMs: 20 } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  // The SDK dispatches notifications a microtask later than responses,
  // so onprogress may miss the last one when it arrives in the same read
  // as the response (typescript-sdk issue #2580): the wire has them all.
  summary.count = { text: text(count), wireProgress, onprogressSeen: progress.length >= 3 };
  summary.sample = text(await client.callTool({ name: "sample", arguments: {} }));
  summary.samplings = samplings;
  summary.rootsRequests = rootsRequests;
  await client.setLoggingLevel("info");
  summary.log = text(await client.callTool({ name: "log", arguments: { message: "from ts" } }));
  summary.logs = logs;
  summary.resources = (await client.listResources()).resources.map((r) => r.uri);
  summary.readme = (await client.readResource({ uri: "test://readme" })).contents.map((c) => c.text);
  summary.template = (await client.readResource({ uri: "test://item/42" })).contents.map((c) => c.text);
  summary.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  const prompt = await client.getPrompt({ name: "greet", arguments: { name: "ts" } });
  summary.prompt = prompt.messages.map((m) => `${m.role}:${m.content.text}`);
  try {
    await client.callTool({ name: "missing", arguments: {} });
    summary.missingTool = "no error";
  } catch (e) {
    summary.missingTool = e.code ?? String(e);
  }
  await client.ping();
  summary.ok = true;
} catch (e) {
  summary.error = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
  clearTimeout(watchdog);
}
console.log(JSON.stringify(summary));
