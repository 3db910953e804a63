// Package auth is the client side of MCP authorization (OAuth 2.1 as
// the MCP specification profiles it): an Authorizer finds a protected
// server's authorization server, identifies the client there, obtains a
// token and puts it on every request of the server's HTTP transport.
//
// The transports of ferry take an *http.Client; an Authorizer plugs in
// as its RoundTripper, so that the transports know nothing of OAuth:
//
//	a := &auth.Authorizer{
//		Server: "https://mcp.example.com/mcp",
//		Store:  &auth.FileStore{},
//		Grant: &auth.AuthorizationCode{
//			Authorize: auth.Loopback(openBrowser),
//		},
//	}
//	t := &streamable.Transport{URL: a.Server, Client: &http.Client{Transport: a.RoundTripper(nil)}}
//	c, err := client.Connect(ctx, t, nil)
//
// When the server refuses a request (401, or 403 insufficient_scope), the
// RoundTripper authorizes and sends the request again, so that the client
// sees the answer (at 2026-07-28 even the first request, server/discover,
// may be refused: the era is decided on the answer, not on the refusal).
// It follows the specification's order at each step:
//
//   - the Protected Resource Metadata (RFC 9728) from the challenge's
//     resource_metadata, else at the path-inserted well-known address,
//     else at the root; its resource must identify the server, and is then
//     sent exactly as published in the resource parameter (RFC 8707) of
//     every authorization, token and refresh request;
//   - the authorization server's metadata (RFC 8414, then OpenID Connect
//     Discovery, path inserted then appended), whose issuer must be the
//     one named, character for character;
//   - the client: pre-registered (Clients), else a client ID metadata
//     document (ClientMetadataURL), else a client registered dynamically
//     before with that authorization server, else a new dynamic
//     registration (RFC 7591); registrations are kept per issuer, so a
//     server that moves to another authorization server gets a new
//     client there, never the old client ID;
//   - the Grant: the authorization code grant with PKCE S256 and the
//     authorization response's iss checked (RFC 9207), or, from the
//     authorization extensions, client credentials (secret or
//     private_key_jwt), enterprise-managed authorization, workload
//     identity (JWT bearer); with DPoP (RFC 9449) when asked;
//   - scopes: those of the challenge, else those the metadata lists, else
//     none; a step-up (403 insufficient_scope) asks for them with those
//     asked before, a few times at most; offline_access only where the
//     authorization server offers it.
//
// Tokens are kept in a Store: FileStore keeps one file per server, mode
// 0600, in the user's configuration directory, and refreshes under a
// lock shared by every process, so that a rotating refresh token is spent
// once however many processes find the token expired at once.
//
// No secret (token, refresh token, client secret, authorization code)
// appears in an error, a log line or the String of a value.
package auth
