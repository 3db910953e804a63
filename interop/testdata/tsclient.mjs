// tsclient drives a stdio MCP server (ferry's example server) with the
// TypeScript SDK's Client and prints one JSON line summing up what it saw;
// tssdk_test.go checks every field.
//
//	node tsclient.mjs NODE_MODULES SERVER [ARGS...]
//
// NODE_MODULES is the directory holding @modelcontextprotocol/sdk: the SDK
// is imported by absolute path because ES modules ignore NODE_PATH.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, command, ...args] = process.argv.slice(2);
if (!nodeModules || !command) {
  console.error("usage: tsclient.mjs NODE_MODULES SERVER [ARGS...]");
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const {
  ElicitRequestSchema,
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  LATEST_PROTOCOL_VERSION,
} = await sdk("types.js");

// A hung server must not hang the test: give up after 45 seconds.
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ error: "timed out" }));
  process.exit(3);
}, 45_000);

const summary = { sdkLatestVersion: LATEST_PROTOCOL_VERSION };
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const client = new Client(
  { name: "ferry-interop-ts", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);

const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const schema = req.params.requestedSchema ?? {};
  elicitations.push({ message: req.params.message, fields: Object.keys(schema.properties ?? {}) });
  return { action: "accept", content: { name: "Ada" } };
});
const samplings = [];
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  const first = req.params.messages[0];
  samplings.push({ maxTokens: req.params.maxTokens, role: first?.role, text: first?.content?.text ?? "" });
  return {
    role: "assistant",
    model: "ts-canned-model",
    stopReason: "endTurn",
    content: { type: "text", text: "A canned summary from the TypeScript client." },
  };
});
let rootsRequests = 0;
client.setRequestHandler(ListRootsRequestSchema, async () => {
  rootsRequests++;
  return { roots: [{ uri: "file:///tmp/ts-interop-root", name: "ts root" }] };
});
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push({ level: n.params.level, logger: n.params.logger, data: n.params.data });
});

const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
// Tap the messages as they arrive, in order, before the SDK dispatches
// them: the initialize result (which the Client does not expose) and the
// progress notifications on the wire.
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
  summary.serverName = client.getServerVersion()?.name;
  const caps = client.getServerCapabilities() ?? {};
  summary.capabilities = Object.keys(caps).sort();

  await client.setLoggingLevel("debug");

  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name).sort();
  summary.toolsWithOutputSchema = tools.tools.filter((t) => t.outputSchema).map((t) => t.name).sort();
  // listTools compiles a validator for each outputSchema; callTool checks
  // structuredContent with it and throws on a mismatch.
  summary.validatorForAdd = typeof client.getToolOutputValidator("add") === "function";

  summary.echo = text(await client.callTool({ name: "echo", arguments: { message: "hello from ts" } }));

  const add = await client.callTool({ name: "add", arguments: { a: 2, b: 3.5 } });
  summary.add = { structuredContent: add.structuredContent, text: text(add), isError: add.isError ?? false };

  const weather = await client.callTool({ name: "weather", arguments: { city: "Oslo", unit: "fahrenheit" } });
  summary.weather = weather.structuredContent;

  const progress = [];
  const countdown = await client.callTool({ name: "countdown", arguments: { steps: 4, delayMs: 10 } }, undefined, {
    onprogress: (p) => progress.push(p),
    timeout: 30_000,
  });
  // The SDK dispatches notifications a microtask late but responses at
  // once, so a progress notification that arrives in the same read as the
  // response reaches onprogress after the handler is gone (and onerror
  // reports an "unknown token"): typescript-sdk issue #2580. onprogress
  // may therefore miss the last one; the wire has them all.
  summary.countdown = {
    text: text(countdown),
    wireProgress: [...wireProgress],
    onprogress: progress.map((p) => p.progress),
    total: progress[0]?.total,
    message: progress[0]?.message,
  };

  summary.askName = text(await client.callTool({ name: "ask_name", arguments: {} }));
  summary.elicitations = elicitations;
  summary.summarize = text(await client.callTool({ name: "summarize", arguments: { text: "MCP connects models to tools." } }));
  summary.samplings = samplings;
  summary.roots = text(await client.callTool({ name: "roots", arguments: {} }));
  summary.rootsRequests = rootsRequests;

  const fail = await client.callTool({ name: "fail", arguments: {} });
  summary.fail = { isError: fail.isError ?? false, text: text(fail) };

  const logged = await client.callTool({ name: "log", arguments: { level: "warning", message: "from ts" } });
  summary.log = { text: text(logged), messages: logs.filter((l) => l.data === "from ts") };

  const resources = await client.listResources();
  summary.resources = resources.resources.map((r) => r.uri).sort();
  const readme = await client.readResource({ uri: "ferry://readme" });
  summary.readme = { mimeType: readme.contents[0]?.mimeType, text: readme.contents[0]?.text };
  const logo = await client.readResource({ uri: "ferry://logo.png" });
  summary.logo = { mimeType: logo.contents[0]?.mimeType, blobBytes: Buffer.from(logo.contents[0]?.blob ?? "", "base64").length };
  const templates = await client.listResourceTemplates();
  summary.templates = templates.resourceTemplates.map((t) => t.uriTemplate);
  const greeting = await client.readResource({ uri: "ferry://greeting/ts" });
  summary.greeting = greeting.contents[0]?.text;

  const prompts = await client.listPrompts();
  summary.prompts = prompts.prompts.map((p) => ({ name: p.name, arguments: (p.arguments ?? []).map((a) => `${a.name}${a.required ? "!" : ""}`) }));
  const review = await client.getPrompt({ name: "review", arguments: { language: "go", style: "thorough" } });
  summary.review = review.messages.map((m) => `${m.role}:${m.content.type}:${m.content.text ?? m.content.resource?.uri}`);
  const simple = await client.getPrompt({ name: "simple" });
  summary.simple = simple.messages[0]?.content?.text;

  summary.completeLanguage = (await client.complete({ ref: { type: "ref/prompt", name: "review" }, argument: { name: "language", value: "py" } })).completion.values;
  summary.completeGreeting = (await client.complete({ ref: { type: "ref/resource", uri: "ferry://greeting/{name}" }, argument: { name: "name", value: "a" } })).completion.values;

  await client.ping();
  summary.ok = true;
} catch (err) {
  summary.error = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
  clearTimeout(watchdog);
}
console.log(JSON.stringify(summary));
process.exitCode = summary.error ? 1 : 0;
