// Package interop tests ferry against MCP implementations it did not
// write: the npm packages pinned in node/package.json (the TypeScript SDK,
// server-everything, the Inspector) and the official Go SDK. It is a
// module of its own so that the ferry library does not depend on them.
//
// Run it with scripts/test.sh, which installs the npm packages and Node 22
// first; FERRY_NODE names the node binary to use.
package interop
