// skills_tsserver serves the skills of a folder over stdio with the
// Skills extension's TypeScript reference (@olaservo/ext-skills, on the v2
// TypeScript SDK, both pinned in node/package.json): discoverSkills and
// registerSkillResources, with directoryRead. serveStdio answers either
// protocol era. skills_test.go drives it with ferry's client and CLI.
//
//	node skills_tsserver.mjs NODE_MODULES SKILLS_DIR
//
// The packages are imported by absolute path because ES modules ignore
// NODE_PATH.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, skillsDir] = process.argv.slice(2);
if (!nodeModules || !skillsDir) {
  console.error("usage: skills_tsserver.mjs NODE_MODULES SKILLS_DIR");
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(nodeModules, p)).href);
const { McpServer } = await load("@modelcontextprotocol/server/dist/index.mjs");
const { serveStdio } = await load("@modelcontextprotocol/server/dist/stdio.mjs");
const { discoverSkills, registerSkillResources } = await load("@olaservo/ext-skills/dist/server/index.js");

const skills = discoverSkills(skillsDir);
serveStdio(() => {
  const server = new McpServer({ name: "ts-skills", version: "1.0.0" }, { capabilities: { resources: {} } });
  registerSkillResources(server, skills, skillsDir, { directoryRead: true, ttlMs: 60_000 });
  return server;
});
