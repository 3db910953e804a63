// ws_tsclient drives a ferry server with the TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned in ../node/package.json) over
// WebSocket (its WebSocketClientTransport, subprotocol "mcp") or
// Streamable HTTP: the legacy session the SDK speaks (tools, a call, the
// experimental tasks of 2025-11-25: callToolStream, getTask, listTasks,
// getTaskResult, cancelTask, an elicitation inside a task), then, over
// WebSocket, raw 2026-07-28 requests through the same transport class.
// It prints one JSON summary line; websocket_test.go checks it.
//
//	node ws_tsclient.mjs NODE_MODULES URL
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, url] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { WebSocketClientTransport } = await sdk("client/websocket.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema } = await sdk("types.js");

const out = {};
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ ...out, error: "timed out" }));
  process.exit(3);
}, 45_000);
const ws = url.startsWith("ws");
const transport = () => (ws ? new WebSocketClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url)));

try {
  const client = new Client({ name: "ferry-interop-ws", version: "1.0.0" },
    { capabilities: { elicitation: {}, tasks: { list: {}, cancel: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.elicitedRelatedTask = !!req.params._meta?.["io.modelcontextprotocol/related-task"]?.taskId;
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(transport());
  out.protocolVersion = client.transport.protocolVersion ?? "2025-11-25";
  out.serverTasks = client.getServerCapabilities()?.tasks ?? null;
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => `${t.name}:${t.execution?.taskSupport ?? "-"}`).sort();
  out.echo = (await client.callTool({ name: "echo", arguments: { message: "hi over " + (ws ? "ws" : "http") } })).content[0].text;

  // A task run to its end, seen through the SDK's stream.
  const kinds = [];
  let taskId;
  for await (const m of client.experimental.tasks.callToolStream({ name: "slow", arguments: { ms: 300 } })) {
    kinds.push(m.type);
    if (m.type === "taskCreated") taskId = m.task.taskId;
    if (m.type === "result") out.slowResult = m.result.content[0].text;
    if (m.type === "error") out.slowError = String(m.error);
  }
  out.streamKinds = [...new Set(kinds)];
  out.getTask = (await client.experimental.tasks.getTask(taskId)).status;
  out.listed = (await client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === taskId);
  const { CallToolResultSchema } = await sdk("types.js");
  const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  out.taskResult = again.content[0].text;
  out.relatedTaskOnResult = again._meta?.["io.modelcontextprotocol/related-task"]?.taskId === taskId;
  try {
    await client.experimental.tasks.cancelTask(taskId);
    out.cancelFinished = "accepted";
  } catch (e) {
    out.cancelFinished = e.code;
  }

  // A task that asks the user, and one cancelled while it runs.
  for await (const m of client.experimental.tasks.callToolStream({ name: "ask", arguments: {} })) {
    if (m.type === "result") out.askResult = m.result.content[0].text;
    if (m.type === "error") out.askError = String(m.error);
  }
  let longId;
  for await (const m of client.experimental.tasks.callToolStream({ name: "slow", arguments: { ms: 60000 } })) {
    if (m.type === "taskCreated") {
      longId = m.task.taskId;
      break;
    }
  }
  out.cancelRunning = (await client.experimental.tasks.cancelTask(longId)).status;
  out.afterCancel = (await client.experimental.tasks.getTask(longId)).status;
  await client.close();

  if (ws) {
    // The stateless revision through the same transport class: the SDK's
    // client speaks only the legacy revisions, its transport carries any.
    const t = new WebSocketClientTransport(new URL(url));
    const answers = new Map();
    t.onmessage = (m) => answers.get(m.id)?.(m);
    await t.start();
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
    };
    let id = 100;
    const rpc = (method, params) => new Promise((resolve) => {
      const i = id++;
      answers.set(i, resolve);
      t.send({ jsonrpc: "2.0", id: i, method, params: { ...params, _meta: meta } });
    });
    const d = await rpc("server/discover", {});
    out.discover = { versions: d.result.supportedVersions, tasksExtension: !!d.result.capabilities.extensions?.["io.modelcontextprotocol/tasks"] };
    out.statelessEcho = (await rpc("tools/call", { name: "echo", arguments: { message: "stateless" } })).result.content[0].text;
    const created = (await rpc("tools/call", { name: "slow", arguments: { ms: 50 } })).result;
    out.statelessTask = created.resultType;
    let got;
    for (let i = 0; i < 100; i++) {
      got = (await rpc("tasks/get", { taskId: created.taskId })).result;
      if (got.status === "completed") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    out.statelessTaskResult = got.result?.content?.[0]?.text;
    await t.close();
  }
  out.ok = true;
} catch (e) {
  out.error = String(e?.stack ?? e);
}
clearTimeout(watchdog);
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
