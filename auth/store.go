package auth

import (
	"context"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// A Record is what a client keeps about one MCP server: its token and
// its registrations with authorization servers.
type Record struct {
	// Server is the MCP endpoint the record is for.
	Server string `json:"server"`
	// Token is the current token, nil when there is none.
	Token *Token `json:"token,omitempty"`
	// Clients holds the clients registered dynamically, by the issuer of
	// the authorization server that registered them: a client ID is
	// valid only where it was issued.
	Clients map[string]*Registration `json:"clients,omitempty"`
	// DPoPKey is the private key (a JWK) DPoP-bound tokens are bound to.
	DPoPKey jsontext.Value `json:"dpop_key,omitempty"`
}

// clone returns a copy of r that shares nothing mutable with it.
func (r *Record) clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	if r.Token != nil {
		t := *r.Token
		c.Token = &t
	}
	if r.Clients != nil {
		c.Clients = make(map[string]*Registration, len(r.Clients))
		for k, v := range r.Clients {
			reg := *v
			c.Clients[k] = &reg
		}
	}
	c.DPoPKey = append(jsontext.Value(nil), r.DPoPKey...)
	return &c
}

// A Registration is a client registered with an authorization server.
type Registration struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthMethod is how the client authenticates to the token endpoint
	// (none, client_secret_basic, client_secret_post).
	AuthMethod string `json:"auth_method,omitempty"`
	// RedirectURI is the redirect URI registered: a loopback client
	// listens on its port again, which a new port would break.
	RedirectURI string `json:"redirect_uri,omitempty"`
	// ExpiresAt is when the client secret expires (Unix seconds), 0 for
	// never.
	ExpiresAt int64 `json:"expires_at,omitempty"`
}

// String describes the registration without its secret.
func (r *Registration) String() string {
	s := "client " + r.ClientID
	if r.ClientSecret != "" {
		s += " (with a secret)"
	}
	return s
}

// GoString is String, so that %#v shows no secret either.
func (r *Registration) GoString() string { return r.String() }

// A Store keeps Records. It is shared by every Authorizer of one user,
// possibly in several processes: Update runs under a lock that keeps
// the others from updating the same record meanwhile, so that a refresh
// token (which a refresh may spend and replace) is spent only once.
type Store interface {
	// Load returns the record of server, or nil when there is none.
	Load(ctx context.Context, server string) (*Record, error)
	// Update holds the lock of server's record, gives f the record as
	// stored now (nil when there is none) and stores what f returns in
	// one piece (nil deletes the record). When f fails, nothing is
	// stored and Update returns f's error.
	Update(ctx context.Context, server string, f func(*Record) (*Record, error)) error
}

// MemoryStore is a Store that keeps records in memory, for one process.
// The zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	records map[string]*Record
}

// Load returns a copy of the record of server.
func (s *MemoryStore) Load(_ context.Context, server string) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records[server].clone(), nil
}

// Update runs f under the store's lock.
func (s *MemoryStore) Update(_ context.Context, server string, f func(*Record) (*Record, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := f(s.records[server].clone())
	if err != nil {
		return err
	}
	if r == nil {
		delete(s.records, server)
		return nil
	}
	if s.records == nil {
		s.records = map[string]*Record{}
	}
	r = r.clone()
	r.Server = server
	s.records[server] = r
	return nil
}
