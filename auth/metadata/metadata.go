// Package metadata holds what an MCP client and a protected MCP server
// tell each other about authorization, on the wire: the Protected
// Resource Metadata a server publishes (RFC 9728), the metadata of an
// authorization server (RFC 8414 and OpenID Connect Discovery), the
// metadata of a client (RFC 7591), the WWW-Authenticate challenges of a
// refusal (RFC 6750, RFC 9449), and the well-known addresses where the
// metadata documents are found, in the order the MCP specification
// gives.
//
// Identifiers (a resource, an issuer) are kept exactly as received:
// nothing here adds or removes a trailing slash or folds case, since the
// specification compares them as strings.
package metadata

// ProtectedResource is the metadata of a protected resource (RFC 9728
// §2), here an MCP server.
type ProtectedResource struct {
	// Resource is the resource identifier: the canonical URI of the MCP
	// server, which clients send as the resource parameter (RFC 8707).
	Resource string `json:"resource"`
	// AuthorizationServers lists the issuer identifiers of the
	// authorization servers that issue tokens for this resource; the
	// MCP specification requires at least one.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scopes needed for basic use of the server.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported says how tokens may be sent; MCP allows the
	// Authorization header only ("header").
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// JWKSURI, ResourceName and ResourceDocumentation are optional
	// descriptions of the resource.
	JWKSURI               string `json:"jwks_uri,omitempty"`
	ResourceName          string `json:"resource_name,omitempty"`
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// DPoPSigningAlgValuesSupported and DPoPBoundAccessTokensRequired
	// describe the resource's use of DPoP (RFC 9449 §5.2).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPBoundAccessTokensRequired bool     `json:"dpop_bound_access_tokens_required,omitempty"`
}

// AuthorizationServer is the metadata of an authorization server (RFC
// 8414 §2, OpenID Connect Discovery §3, and the fields of RFC 9207, RFC
// 9449 and of client ID metadata documents).
type AuthorizationServer struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	JWKSURI                                    string   `json:"jwks_uri,omitempty"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint,omitempty"`
	RevocationEndpoint                         string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported says that the server
	// puts its issuer in every authorization response (RFC 9207 §3).
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// ClientIDMetadataDocumentSupported says that the server accepts an
	// HTTPS URL of a client metadata document as client_id.
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	DPoPSigningAlgValuesSupported     []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// OAuthClient is the metadata of an OAuth client (RFC 7591 §2), as sent in a
// dynamic registration request or published in a client ID metadata
// document, with the fields of the registration response (§3.2.1).
type OAuthClient struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at,omitempty"`
	ClientSecretExpiresAt   int64    `json:"client_secret_expires_at,omitempty"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	// ApplicationType is "native" or "web" (OpenID Connect Dynamic
	// Client Registration §2), which MCP clients must send.
	ApplicationType string `json:"application_type,omitempty"`
	JWKSURI         string `json:"jwks_uri,omitempty"`
	SoftwareID      string `json:"software_id,omitempty"`
	SoftwareVersion string `json:"software_version,omitempty"`
}

// Token endpoint authentication methods (RFC 7591 §2, RFC 7523).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// Grant types used by MCP clients.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// ScopeOfflineAccess asks an authorization server for a refresh token.
const ScopeOfflineAccess = "offline_access"
