// tsoauth connects the TypeScript SDK's OAuth client (its
// StreamableHTTPClientTransport with an OAuthClientProvider, pinned in
// node/package.json) to a protected MCP server, as an application built
// on the SDK would:
//
//	node tsoauth.mjs NODE_MODULES SERVER_URL REDIRECT_URL
//
// Each time the SDK sends the user to the authorization server, the
// script prints {"authorize": URL} and reads, on stdin, the URL the
// browser was redirected to (oauth_test.go plays the browser). The SDK
// discovers the authorization server, registers a client, authorizes and
// connects; the script lists the tools and calls whoami, then write, a
// tool that needs a scope the first token lacks: the server's 403
// insufficient_scope makes the SDK authorize again (a step-up), and the
// call is retried. It prints one summary line:
// {"tools": [...], "whoami": "...", "write": "...", "whoamiAfter": "...",
// "authorizations": N, "reregistered": BOOL}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

const [nodeModules, serverURL, redirectURL] = process.argv.slice(2);
if (!nodeModules || !serverURL || !redirectURL) {
  console.error("usage: tsoauth.mjs NODE_MODULES SERVER_URL REDIRECT_URL");
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { UnauthorizedError } = await sdk("client/auth.js");

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const state = { authorizations: 0 };
const provider = {
  get redirectUrl() { return redirectURL; },
  get clientMetadata() {
    return {
      client_name: "ts-sdk-interop",
      redirect_uris: [redirectURL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "native",
    };
  },
  clientInformation: () => state.client,
  saveClientInformation: (c) => { state.client = c; },
  tokens: () => state.tokens,
  saveTokens: (t) => { state.tokens = t; },
  saveCodeVerifier: (v) => { state.verifier = v; },
  codeVerifier: () => state.verifier,
  redirectToAuthorization: (url) => { state.authorizeURL = url.toString(); },
};

// authorized runs op; when the SDK stops to send the user to the
// authorization server, it has the test play the browser, finishes the
// authorization and runs op once more.
//
// The SDK registers its client with the scope it asks for first
// (registerClient's scope), and oidc-provider keeps a registered client
// to its scope: the step-up's authorization comes back invalid_scope.
// The application then forgets the registration and connects afresh, so
// that the SDK registers again with the scope of the 403 challenge.
const authorized = async (op) => {
  for (;;) {
    try {
      return await op();
    } catch (e) {
      if (!(e instanceof UnauthorizedError) || !state.authorizeURL || state.authorizations >= 4) throw e;
    }
    console.log(JSON.stringify({ authorize: state.authorizeURL }));
    state.authorizeURL = undefined;
    state.authorizations++;
    const { value: back, done } = await lines.next();
    if (done) throw new Error("no redirect on stdin");
    const params = new URL(back.trim()).searchParams;
    const error = params.get("error");
    if (error === "invalid_scope" && state.client && !state.reregistered) {
      state.reregistered = true;
      state.client = undefined;
      await client.close();
      await connect();
      continue;
    }
    if (error) throw new Error(`authorization refused: ${error}`);
    await transport.finishAuth(params.get("code"));
  }
};

let client, transport;
const connect = async () => {
  // A client whose first connection failed is not reused: connect
  // afresh, as an application does after the user came back.
  client = new Client({ name: "ts-sdk-interop", version: "1.0.0" });
  transport = new StreamableHTTPClientTransport(new URL(serverURL), { authProvider: provider });
  await client.connect(transport);
};
await authorized(connect);
const text = (res) => res.content[0].text;
const { tools } = await client.listTools();
const whoami = text(await client.callTool({ name: "whoami", arguments: {} }));
const write = text(await authorized(() => client.callTool({ name: "write", arguments: {} })));
const whoamiAfter = text(await client.callTool({ name: "whoami", arguments: {} }));
console.log(JSON.stringify({
  tools: tools.map((t) => t.name).sort(),
  whoami,
  write,
  whoamiAfter,
  authorizations: state.authorizations,
  reregistered: !!state.reregistered,
}));
await client.close();
process.exit(0);
