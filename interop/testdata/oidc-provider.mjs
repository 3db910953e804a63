// oidc-provider runs panva's oidc-provider (pinned in node/package.json),
// a certified OpenID Connect and OAuth 2.0 authorization server we did not
// write, as the authorization server of the OAuth interop tests
// (oauth_test.go), on 127.0.0.1:
//
//	node oidc-provider.mjs NODE_MODULES PORT [ACCESS_TOKEN_TTL_SECONDS]
//
// Configured as the MCP specification expects an authorization server to
// be: RFC 8414 metadata, dynamic client registration, PKCE S256
// required, resource indicators (RFC 8707) that issue JWT access tokens
// (RFC 9068) whose audience is the resource asked for, signed with the
// keys at its JWKS; the iss response parameter (RFC 9207); refresh tokens
// (with offline_access), rotated on every use, a reused one revoking the
// grant; introspection and revocation. Its development login and consent
// pages are plain HTML forms, which the tests fill in as a user would.
// It prints "listening on ISSUER" once ready.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, port, ttl] = process.argv.slice(2);
if (!nodeModules || !port) {
  console.error("usage: oidc-provider.mjs NODE_MODULES PORT [ACCESS_TOKEN_TTL_SECONDS]");
  process.exit(2);
}
const { default: Provider } = await import(pathToFileURL(join(nodeModules, "oidc-provider/lib/index.js")).href);

const issuer = `http://127.0.0.1:${port}`;
const accessTokenTTL = Number(ttl || 600);
const provider = new Provider(issuer, {
  features: {
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: "mcp:read mcp:write",
        audience: resource,
        accessTokenTTL,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
    introspection: { enabled: true },
    revocation: { enabled: true },
    devInteractions: { enabled: true },
  },
  scopes: ["openid", "offline_access", "mcp:read", "mcp:write"],
  pkce: { required: () => true },
  rotateRefreshToken: () => true,
  ttl: { AccessToken: accessTokenTTL },
  // The clients of the tests are loopback apps.
  clientDefaults: { grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
});
provider.on("server_error", (ctx, err) => console.error("server_error", err));
provider.on("grant.error", (ctx, err) => console.error("grant.error", err.name, err.error_description || ""));
provider.on("grant.revoked", (ctx, grantId) => console.error("grant.revoked", grantId));

const server = provider.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening on ${issuer}`);
});
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => server.close(() => process.exit(0)));
