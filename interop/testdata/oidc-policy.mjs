// oidc-policy runs panva's oidc-provider (pinned in node/package.json) as
// the identity provider of the gateway policy interop tests
// (gateway_policy_test.go), on 127.0.0.1:
//
//	node oidc-policy.mjs NODE_MODULES PORT
//
// Two service clients get JWT access tokens (RFC 9068) by the client
// credentials grant, for the resource they name (RFC 8707), with a
// "roles" claim of their own: alice-app is an admin granted mcp:read and
// mcp:write, bob-app a reader granted mcp:read only. Their secrets are
// "alice-secret" and "bob-secret". It prints "listening on ISSUER" once
// ready.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, port] = process.argv.slice(2);
if (!nodeModules || !port) {
  console.error("usage: oidc-policy.mjs NODE_MODULES PORT");
  process.exit(2);
}
const { default: Provider } = await import(pathToFileURL(join(nodeModules, "oidc-provider/lib/index.js")).href);

const issuer = `http://127.0.0.1:${port}`;
const roles = { "alice-app": ["admin"], "bob-app": ["reader"] };
const client = (id, scope) => ({
  client_id: id,
  client_secret: id.replace("-app", "-secret"),
  grant_types: ["client_credentials"],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: "client_secret_basic",
  scope,
});
const provider = new Provider(issuer, {
  clients: [client("alice-app", "mcp:read mcp:write"), client("bob-app", "mcp:read")],
  features: {
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: "mcp:read mcp:write",
        audience: resource,
        accessTokenTTL: 600,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
    devInteractions: { enabled: false },
  },
  scopes: ["mcp:read", "mcp:write"],
  extraTokenClaims: (ctx, token) => ({ roles: roles[token.clientId] || [] }),
});
provider.on("server_error", (ctx, err) => console.error("server_error", err));
provider.on("grant.error", (ctx, err) => console.error("grant.error", err.name, err.error_description || ""));

const server = provider.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening on ${issuer}`);
});
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => server.close(() => process.exit(0)));
