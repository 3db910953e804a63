// gateway_tasks_tsclient drives tasks through `ferry serve` in front of
// server-everything (whose simulate-research-query runs only as a task)
// with the TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// ../node/package.json): in 2025-11-25, the SDK's experimental tasks
// (callToolStream, getTask, listTasks, getTaskResult, cancelTask) on the
// aggregated endpoint, a server's own and HTTP+SSE; in 2026-07-28, which
// the SDK's client does not speak (its v2 client refuses tasks/get toward
// a 2026-07-28 peer), raw requests of the tasks extension through the
// SDK's Streamable HTTP transport. It prints one JSON line;
// gateway_tasks_test.go checks it.
//
//	node gateway_tasks_tsclient.mjs NODE_MODULES BASE_URL
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, base] = process.argv.slice(2);
if (!nodeModules || !base) {
  console.error("usage: gateway_tasks_tsclient.mjs NODE_MODULES BASE_URL");
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { SSEClientTransport } = await sdk("client/sse.js");
const { CallToolResultSchema, TaskStatusNotificationSchema } = await sdk("types.js");

const out = {};
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ ...out, error: "timed out" }));
  process.exit(3);
}, 90_000);

const firstLine = (res) => (res?.content?.[0]?.text ?? "").split("\n")[0];

async function connect(path) {
  const client = new Client({ name: "ferry-interop-gateway-tasks", version: "1.0.0" }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  const url = new URL(base + path);
  await client.connect(path.endsWith("/sse") ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url));
  await client.listTools(); // the SDK learns which tools need a task
  return client;
}

// research runs the task to its end through the SDK's stream.
async function research(client, name, topic) {
  const r = { kinds: [] };
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: { topic } })) {
    r.kinds.push(m.type);
    if (m.type === "taskCreated") r.taskId = m.task.taskId;
    if (m.type === "result") r.result = firstLine(m.result);
    if (m.type === "error") r.error = String(m.error);
  }
  r.kinds = [...new Set(r.kinds)];
  return r;
}

async function legacy() {
  const all = await connect("/mcp");
  // notifications/tasks/status, on the session's GET stream.
  const notified = new Set();
  all.setNotificationHandler(TaskStatusNotificationSchema, (n) => notified.add(n.params.status));
  out.serverTasks = all.getServerCapabilities()?.tasks ?? null;
  const tools = (await all.listTools()).tools;
  out.researchTaskSupport = tools.find((t) => t.name === "everything__simulate-research-query")?.execution?.taskSupport ?? null;
  const own = await connect("/servers/everything/mcp");
  const sse = await connect("/sse");
  const [r, o, s] = await Promise.all([
    research(all, "everything__simulate-research-query", "ferry"),
    research(own, "simulate-research-query", "own endpoint"),
    research(sse, "everything__simulate-research-query", "over sse"),
  ]);
  out.legacy = { stream: r.kinds, result: r.result, error: r.error, ownResult: o.result ?? o.error, sseResult: s.result ?? s.error };
  out.legacy.getTask = (await all.experimental.tasks.getTask(r.taskId)).status;
  out.legacy.listed = (await all.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === r.taskId);
  out.legacy.otherSessionLists = (await own.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === r.taskId);
  const again = await all.experimental.tasks.getTaskResult(r.taskId, CallToolResultSchema);
  out.legacy.taskResult = firstLine(again);
  out.legacy.relatedTask = again._meta?.["io.modelcontextprotocol/related-task"]?.taskId === r.taskId;
  try {
    await all.experimental.tasks.cancelTask(r.taskId);
    out.legacy.cancelFinished = "accepted";
  } catch (e) {
    out.legacy.cancelFinished = e.code;
  }
  let longId;
  for await (const m of all.experimental.tasks.callToolStream({ name: "everything__simulate-research-query", arguments: { topic: "cancelled" } })) {
    if (m.type === "taskCreated") {
      longId = m.task.taskId;
      break;
    }
  }
  out.legacy.cancelRunning = (await all.experimental.tasks.cancelTask(longId)).status;
  out.legacy.afterCancel = (await all.experimental.tasks.getTask(longId)).status;
  try {
    await own.experimental.tasks.getTask(longId);
    out.legacy.otherSessionGets = "read";
  } catch (e) {
    out.legacy.otherSessionGets = e.code;
  }
  out.legacy.statusNotified = notified.has("completed");
  await Promise.all([all.close(), own.close(), sse.close()]);
}

// mirrored adds the routing headers a 2026-07-28 client sends (Mcp-Method,
// and Mcp-Name from the member the revision names), which the SDK's v1
// transport does not know.
const nameMember = { "tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId" };
const mirrored = async (url, init) => {
  const msg = typeof init?.body === "string" ? JSON.parse(init.body) : null;
  if (msg?.method) {
    const headers = new Headers(init.headers);
    headers.set("Mcp-Method", msg.method);
    const member = nameMember[msg.method];
    if (member && typeof msg.params?.[member] === "string") headers.set("Mcp-Name", msg.params[member]);
    init = { ...init, headers };
  }
  return fetch(url, init);
};

async function stateless() {
  const t = new StreamableHTTPClientTransport(new URL(base + "/mcp"), { fetch: mirrored });
  const answers = new Map();
  t.onmessage = (m) => answers.get(m.id)?.(m);
  await t.start();
  t.setProtocolVersion("2026-07-28");
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
  };
  let id = 100;
  const rpc = (method, params) => new Promise((resolve, reject) => {
    const i = id++;
    answers.set(i, resolve);
    // An error answered with an HTTP error status is thrown by send, its
    // body in the message.
    t.send({ jsonrpc: "2.0", id: i, method, params: { ...params, _meta: meta } }).catch((e) => {
      const code = /"code":(-?\d+)/.exec(String(e?.message))?.[1];
      code ? resolve({ error: { code: Number(code) } }) : reject(e);
    });
  });
  const s = {};
  const d = await rpc("server/discover", {});
  s.tasksExtension = !!d.result?.capabilities?.extensions?.["io.modelcontextprotocol/tasks"];
  const created = (await rpc("tools/call", { name: "everything__simulate-research-query", arguments: { topic: "stateless" } })).result;
  s.created = created?.resultType;
  let got;
  for (let i = 0; i < 200; i++) {
    got = (await rpc("tasks/get", { taskId: created.taskId })).result;
    if (got?.status !== "working") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  s.status = got?.status;
  s.result = firstLine(got?.result);
  const long = (await rpc("tools/call", { name: "everything__simulate-research-query", arguments: { topic: "cancelled" } })).result;
  s.cancel = (await rpc("tasks/cancel", { taskId: long.taskId })).result?.resultType;
  s.afterCancel = (await rpc("tasks/get", { taskId: long.taskId })).result?.status;
  s.list = (await rpc("tasks/list", {})).error?.code;
  s.unknown = (await rpc("tasks/get", { taskId: "not-a-task" })).error?.code;
  out.stateless = s;
  await t.close();
}

try {
  await Promise.all([legacy(), stateless()]);
  out.ok = true;
} catch (e) {
  out.error = String(e?.stack ?? e);
}
clearTimeout(watchdog);
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
