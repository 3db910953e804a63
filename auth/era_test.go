package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// TestFirstRequestRefused: a stateless server refuses even the client's
// first request, server/discover, with 401. The authorization happens in
// the transport, before the client decides the server's era: the client
// sees the answer to the authorized request and talks stateless, not
// legacy (an initialize would be a second, needless request).
func TestFirstRequestRefused(t *testing.T) {
	as := newTestAS(t)
	s := server.New(protocol.Implementation{Name: "protected", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	h := streamablehandler.New(s, nil)
	defer h.Close()
	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	defer rs.Close()
	resource := rs.URL + "/mcp"
	var methods []string
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Header.Get("Mcp-Method")+" "+r.Header.Get("Authorization")[:min(6, len(r.Header.Get("Authorization")))])
		as.protect(resource, h).ServeHTTP(w, r)
	}))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeTestJSON(w, 200, metadata.ProtectedResource{Resource: resource, AuthorizationServers: []string{as.srv.URL}})
	})

	a := &Authorizer{Server: resource, Grant: &AuthorizationCode{Authorize: headless(t)}}
	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: resource, Client: &http.Client{Transport: a.RoundTripper(nil)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Stateless() {
		t.Fatalf("the client talks legacy to a stateless server; requests: %q", methods)
	}
	res, err := c.Call(ctx, "echo", map[string]string{"message": "hi"})
	if err != nil || res.Content[0].Text != "hi" {
		t.Fatalf("call: %v, %v", res, err)
	}
	want := []string{"server/discover ", "server/discover Bearer", "tools/call Bearer"}
	if len(methods) != len(want) {
		t.Fatalf("requests %q, want %q", methods, want)
	}
	for i := range want {
		if methods[i] != want[i] {
			t.Fatalf("requests %q, want %q", methods, want)
		}
	}
}
