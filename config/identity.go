package config

// Identity is the "identity" section of a gateway's configuration: the
// OAuth authorization server whose access tokens callers present, which
// makes the gateway an OAuth resource server (the MCP authorization
// profile): tokens are checked as JWTs against the issuer's keys, or by
// introspection, and the caller is the token's subject, with its claims,
// scopes and roles. SIGHUP reads it again with the rest of the
// configuration: everything in it may change but the resource's path (of
// its metadata), and a reload may neither add nor remove the section.
// Audiences are always checked: a token, or an introspection answer,
// that names none is refused, as the MCP authorization specification
// requires (a MUST), so there is no option to accept them.
//
//	"identity": {
//	  "issuer": "https://login.example.com",
//	  "resource": "https://mcp.example.com/mcp",
//	  "scopes": ["mcp"],
//	  "roles_claim": "roles"
//	}
type Identity struct {
	// Issuer is the authorization server's issuer identifier. Required.
	Issuer string `json:"issuer"`
	// Resource is the gateway's resource identifier: its /mcp address as
	// clients reach it, which tokens must be issued for (their audience,
	// RFC 8707). Required.
	Resource string `json:"resource"`
	// Audience, when tokens name another audience than Resource (a
	// provider that cannot issue for a URL), is the one they must name.
	Audience string `json:"audience,omitempty"`
	// JWKSURI is where the issuer's signing keys are; empty means the
	// jwks_uri of the issuer's metadata.
	JWKSURI string `json:"jwks_uri,omitempty"`
	// Introspection, when set, checks tokens by introspection (RFC
	// 7662) instead of as JWTs: for opaque tokens.
	Introspection *Introspection `json:"introspection,omitempty"`
	// Scopes are needed for every request; ScopesSupported are
	// published in the Protected Resource Metadata (default Scopes).
	Scopes          []string `json:"scopes,omitempty"`
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// RolesClaim names the claim holding the caller's roles (a list of
	// strings, or one string of roles separated by spaces); default
	// "roles".
	RolesClaim string `json:"roles_claim,omitempty"`
}

// Introspection is a token introspection endpoint and the client the
// gateway authenticates to it as.
type Introspection struct {
	URL      string `json:"url"`
	ClientID string `json:"client_id"`
	// ClientSecret is best given as ${VAR}, from the environment.
	ClientSecret string `json:"client_secret"`
}
