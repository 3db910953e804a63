// skills_tsclient reads every skill of a Streamable HTTP server with the
// Skills extension's TypeScript reference client (@olaservo/ext-skills on
// the v2 TypeScript SDK, pinned in node/package.json): listSkills,
// getSkill, readSkill and readSkillResource (each verified against the
// entry), readDirectory. It prints one JSON line; skills_test.go checks
// it against ferry's server.
//
//	node skills_tsclient.mjs NODE_MODULES URL legacy|auto
//
// legacy speaks 2025-11-25 (initialize); auto negotiates the newest
// revision both sides speak (2026-07-28 with ferry).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, url, era] = process.argv.slice(2);
if (!nodeModules || !url || !era) {
  console.error("usage: skills_tsclient.mjs NODE_MODULES URL legacy|auto");
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(nodeModules, p)).href);
const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client/dist/index.mjs");
const sk = await load("@olaservo/ext-skills/dist/client/index.js");

// A hung server must not hang the test.
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ error: "timed out" }));
  process.exit(3);
}, 30_000);

const options = era === "auto" ? { versionNegotiation: { mode: "auto" } } : {};
const client = new Client({ name: "ferry-interop-skills", version: "1.0.0" }, options);
const summary = {};
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  summary.supportsSkills = sk.serverSupportsSkills(client);
  summary.directoryRead = sk.serverSupportsDirectoryRead(client);
  summary.skills = {};
  for (const entry of await sk.listSkills(client)) {
    const got = await sk.getSkill(client, entry.uri);
    const skill = { name: entry.frontmatter.name, getMatchesList: JSON.stringify(got) === JSON.stringify(entry), files: {} };
    try {
      skill.skillMD = (await sk.readSkill(client, entry)).length;
      for (const r of entry.resources) {
        const c = await sk.readSkillResource(client, entry, r.uri);
        skill.files[r.uri] = c.text !== undefined ? Buffer.byteLength(c.text) : Buffer.from(c.blob, "base64").length;
      }
      const root = entry.uri.slice(0, -"/SKILL.md".length);
      const dir = await sk.readDirectory(client, root);
      skill.directory = dir.resources.map((r) => r.uri + (r.mimeType === "inode/directory" ? "/" : "")).sort();
    } catch (err) {
      skill.error = String(err.message ?? err);
    }
    summary.skills[entry.uri] = skill;
  }
  summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? null;
} catch (err) {
  summary.error = String(err.message ?? err);
}
clearTimeout(watchdog);
console.log(JSON.stringify(summary));
await client.close().catch(() => {});
process.exit(0);
