package resourceserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth"
	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A protected MCP server and a client that gets its token by itself: the
// server answers the client's first request with 401, the client's
// Authorizer finds the authorization server in the server's metadata,
// obtains a token for that server (here with client credentials) and
// sends the request again; the tool sees who calls.
func Example() {
	as := startAuthorizationServer() // any OAuth server issuing JWT access tokens

	s := server.New(protocol.Implementation{Name: "files", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "whoami"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		caller, _ := intercept.CallerFrom(ctx)
		return caller.Subject + " " + strings.Join(caller.Scopes, " "), nil
	})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	rs := &resourceserver.Config{
		Resource:             srv.URL + "/mcp",
		AuthorizationServers: []string{as.URL},
		Verifier:             &resourceserver.JWT{Issuer: as.URL},
		Scopes:               []string{"files:read"},
	}
	h := streamablehandler.New(s, nil)
	defer h.Close()
	rs.Mount(mux, "/mcp", h)

	a := &auth.Authorizer{
		Server: srv.URL + "/mcp",
		Grant:  &auth.ClientCredentials{ClientID: "reporter", ClientSecret: "s3cret"},
	}
	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: a.Server, Client: &http.Client{Transport: a.RoundTripper(nil)}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "whoami", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output: reporter files:read
}

// startAuthorizationServer starts a minimal authorization server: its
// metadata, its keys, and a token endpoint for the client credentials
// grant that issues JWT access tokens for the resource asked.
func startAuthorizationServer() *httptest.Server {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k"}}, (&jose.SignerOptions{}).WithType("at+jwt"))
	mux := http.NewServeMux()
	as := httptest.NewServer(mux)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.MarshalWrite(w, map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token", "jwks_uri": as.URL + "/jwks",
			"grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k", Algorithm: "ES256", Use: "sig"}}})
		w.Write(b)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if r.FormValue("grant_type") != "client_credentials" || id != "reporter" || secret != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			json.MarshalWrite(w, map[string]string{"error": "invalid_client"})
			return
		}
		now := time.Now()
		tok, _ := jwt.Signed(signer).Claims(map[string]any{"iss": as.URL, "sub": id, "client_id": id, "aud": r.FormValue("resource"),
			"scope": r.FormValue("scope"), "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}).Serialize()
		w.Header().Set("Content-Type", "application/json")
		json.MarshalWrite(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": r.FormValue("scope")})
	})
	return as
}
