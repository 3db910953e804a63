// gateway_views_tsclient drives a view of `ferry serve` (/views/NAME/mcp
// over Streamable HTTP, or /views/NAME/sse) with the TypeScript SDK's
// client: it lists the view's tools and prompts, calls the renamed tools
// and the prompt, and sends an argument the view fixes, which must fail
// with -32602. It prints one JSON line summing up what it saw;
// gateway_views_test.go checks every field.
//
//	node gateway_views_tsclient.mjs NODE_MODULES VIEW_URL
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, url] = process.argv.slice(2);
if (!nodeModules || !url) {
  console.error("usage: gateway_views_tsclient.mjs NODE_MODULES VIEW_URL");
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { SSEClientTransport } = await sdk("client/sse.js");

const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ error: "timed out" }));
  process.exit(3);
}, 60_000);

const text = (res) => (res.content ?? res.messages?.map((m) => m.content) ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const refusal = async (call) => {
  try {
    await call();
    return { code: null };
  } catch (e) {
    return { code: e.code ?? null, message: String(e.message ?? e) };
  }
};
const summary = {};

try {
  const client = new Client({ name: "ferry-interop-views", version: "1.0.0" });
  const u = new URL(url);
  await client.connect(u.pathname.endsWith("/sse") ? new SSEClientTransport(u) : new StreamableHTTPClientTransport(u));
  summary.protocolVersion = client.transport?.protocolVersion ?? null;
  const tools = (await client.listTools()).tools;
  summary.tools = tools.map((t) => t.name);
  const say = tools.find((t) => t.name === "say");
  summary.sayTitle = say?.title ?? null;
  summary.sayDescription = say?.description ?? null;
  summary.sayProperties = Object.keys(say?.inputSchema?.properties ?? {});
  const add = tools.find((t) => t.name === "add");
  summary.addProperties = Object.keys(add?.inputSchema?.properties ?? {});
  summary.addRequired = add?.inputSchema?.required ?? [];
  summary.say = text(await client.callTool({ name: "say", arguments: {} }));
  summary.add = text(await client.callTool({ name: "add", arguments: { a: 5 } }));
  summary.sayFixedSent = await refusal(() => client.callTool({ name: "say", arguments: { message: "mine" } }));
  summary.hidden = await refusal(() => client.callTool({ name: "everything__echo", arguments: { message: "x" } }));
  const prompts = (await client.listPrompts()).prompts;
  summary.prompts = prompts.map((p) => ({ name: p.name, arguments: (p.arguments ?? []).map((a) => a.name) }));
  summary.weather = text(await client.getPrompt({ name: "weather", arguments: { city: "Portland" } }));
  summary.weatherFixedSent = await refusal(() => client.getPrompt({ name: "weather", arguments: { city: "Portland", state: "Maine" } }));
  await client.close();
} catch (e) {
  summary.error = String(e?.stack ?? e);
}
clearTimeout(watchdog);
console.log(JSON.stringify(summary));
process.exit(0);
