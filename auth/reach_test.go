package auth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// remote is what the tests take for the public internet: TEST-NET-1,
// dialed to a test listener.
const remote = "http://192.0.2.1"

// victim is a service on this machine (or, dialed as 10.0.0.1, on the
// LAN) that counts the requests it gets: a request there is one sent on
// behalf of a peer to a place only the user reaches.
func victim(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	v := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(v.Close)
	return v, &hits
}

// dialing returns a client that dials the addresses of routes to test
// listeners, and the others as they are.
func dialing(t *testing.T, routes map[string]string) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := routes[addr]; ok {
			addr = to
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestPeerChosenAddressesReach: an MCP server on the public internet
// names addresses on this machine or the LAN for its metadata, its
// authorization server or its token endpoint, directly or by a redirect.
// Nothing is sent there; the same server naming its own addresses gets
// its token.
func TestPeerChosenAddressesReach(t *testing.T) {
	v, hits := victim(t)
	lan := "http://10.0.0.1"
	ownPRM := remote + "/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name                     string
		resourceMetadata, issuer string
		tokenEndpoint, wantErr   string
		authorizationEndpoint    string // for the authorization code grant
	}{
		{"own addresses", ownPRM, remote, remote + "/token", "", ""},
		{"metadata on loopback", v.URL + "/.well-known/oauth-protected-resource", remote, remote + "/token", "loopback", ""},
		{"metadata with a query", v.URL + "/admin/delete-everything?confirm=yes", remote, remote + "/token", "query", ""},
		{"metadata on localhost", strings.Replace(v.URL, "127.0.0.1", "localhost", 1) + "/x", remote, remote + "/token", "loopback", ""},
		{"metadata on the LAN", lan + "/.well-known/oauth-protected-resource", remote, remote + "/token", "private network", ""},
		{"metadata redirected to loopback", remote + "/moved", remote, remote + "/token", "loopback", ""},
		{"metadata redirected in a loop", remote + "/loop", remote, remote + "/token", "more than 5 redirects", ""},
		{"issuer on loopback", ownPRM, v.URL, remote + "/token", "loopback", ""},
		{"token endpoint on loopback", ownPRM, remote, v.URL + "/token", "loopback", ""},
		{"authorization endpoint on loopback", ownPRM, remote, remote + "/token", "loopback", v.URL + "/authorize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			mux := http.NewServeMux()
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") == "Bearer at" {
					return
				}
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, tt.resourceMetadata))
				w.WriteHeader(http.StatusUnauthorized)
			})
			mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, v.URL+"/.well-known/oauth-protected-resource", http.StatusFound)
			})
			mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/loop", http.StatusFound)
			})
			mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
				writeTestJSON(w, 200, metadata.ProtectedResource{Resource: remote + "/mcp", AuthorizationServers: []string{tt.issuer}})
			})
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				writeTestJSON(w, 200, metadata.AuthorizationServer{Issuer: remote, TokenEndpoint: tt.tokenEndpoint,
					AuthorizationEndpoint: tt.authorizationEndpoint, CodeChallengeMethodsSupported: []string{"S256"}})
			})
			mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
				writeTestJSON(w, 200, map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600})
			})
			mcp := httptest.NewServer(mux)
			defer mcp.Close()
			hc := dialing(t, map[string]string{"192.0.2.1:80": mcp.Listener.Addr().String(), "10.0.0.1:80": v.Listener.Addr().String()})
			a := &Authorizer{Server: remote + "/mcp", HTTPClient: hc, InsecureHTTP: true,
				Grant: &ClientCredentials{ClientID: "c", ClientSecret: "sekrit-123"}}
			if tt.authorizationEndpoint != "" {
				// The browser goes where it is sent.
				a.Grant = &AuthorizationCode{RedirectURL: "http://127.0.0.1:1/callback", Authorize: headless(t)}
				a.Clients = []RegisteredClient{{ID: "c"}}
			}
			_, err := a.Login(context.Background())
			t.Logf("login: %v", err)
			if n := hits.Load(); n != 0 {
				t.Fatalf("the service on this machine got %d requests (login: %v)", n, err)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("login: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("login: %v, want an error saying %q", err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "sekrit"):
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestEndpointRedirectNotFollowed: a token or registration endpoint that
// answers 307 would have the client POST the code, the PKCE verifier or
// its registration again to wherever it points (over http, to another
// host). The redirect is not followed and the error says so.
func TestEndpointRedirectNotFollowed(t *testing.T) {
	var thefts atomic.Int64
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		thefts.Add(1)
		writeTestJSON(w, 200, map[string]any{"access_token": "stolen", "token_type": "Bearer", "client_id": "stolen"})
	}))
	defer thief.Close()
	mover := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer mover.Close()
	tests := []struct {
		name string
		move func(m *metadata.AuthorizationServer)
		want string
	}{
		{"token", func(m *metadata.AuthorizationServer) { m.TokenEndpoint = mover.URL + "/token" }, "the token endpoint redirected (307)"},
		{"registration", func(m *metadata.AuthorizationServer) { m.RegistrationEndpoint = mover.URL + "/register" }, "the registration endpoint redirected (307)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thefts.Store(0)
			as := newTestAS(t)
			tt.move(&as.meta)
			_, err := newAuthorizer(as, nil).Login(context.Background())
			t.Logf("login: %v", err)
			if n := thefts.Load(); n != 0 {
				t.Fatalf("the redirect was followed: the other server got %d requests (login: %v)", n, err)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("login: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestAddrClass(t *testing.T) {
	tests := []struct {
		addr string
		want netClass
	}{
		{"127.0.0.1", netLoopback},
		{"127.8.9.10", netLoopback},
		{"::1", netLoopback},
		{"::ffff:127.0.0.1", netLoopback},
		{"0.0.0.0", netLoopback},
		{"::", netLoopback},
		{"10.1.2.3", netPrivate},
		{"172.16.0.1", netPrivate},
		{"192.168.1.1", netPrivate},
		{"169.254.169.254", netPrivate}, // cloud metadata services
		{"100.64.0.1", netPrivate},
		{"fd00::1", netPrivate},
		{"fe80::1", netPrivate},
		{"192.0.2.1", netPublic},
		{"8.8.8.8", netPublic},
		{"2001:db8::1", netPublic},
	}
	for _, tt := range tests {
		if got := addrClass(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("addrClass(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}
