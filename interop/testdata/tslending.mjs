// tslending calls the echo tool of a ferry server over Streamable HTTP
// with the TypeScript SDK's client, many calls at once, each with a
// message of its own and of its own size, and checks every answer; it
// prints one JSON line. lending_test.go runs it against a server whose
// handlers lend their arguments, whose request bodies are thus recycled.
//
//	node tslending.mjs NODE_MODULES URL CALLS CONCURRENCY
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, url, calls, concurrency] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ error: "timed out" }));
  process.exit(3);
}, 45_000);

const client = new Client({ name: "ferry-interop-lending", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

let next = 0, checked = 0;
const mismatches = [];
async function worker(w) {
  for (let i = next++; i < Number(calls); i = next++) {
    // Sizes from 1 to about 100 KiB, so that recycled buffers change
    // hands between bodies of different lengths.
    const size = 1 + ((i * 104729 + w * 7919) % (100 << 10));
    const message = `${i}:` + String.fromCharCode(97 + (i % 26)).repeat(size);
    const res = await client.callTool({ name: "echo", arguments: { message } });
    const text = res.content?.[0]?.text;
    if (text !== message) {
      mismatches.push({ call: i, sent: message.length, got: text?.length, isError: res.isError ?? false });
    }
    checked++;
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, (_, w) => worker(w)));
await client.close();
clearTimeout(watchdog);
console.log(JSON.stringify({ checked, mismatches: mismatches.slice(0, 5) }));
