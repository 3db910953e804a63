package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// seen is what the server of a test saw of one request.
type seen struct {
	Method, Auth, McpName, Tool string
}

// echoServer answers the handshake of either era and tools/call as an
// echo tool does, under whatever name it is called, and records every
// request, the session's DELETE included.
func echoServer(t *testing.T) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var log []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string            `json:"name"`
				Arguments map[string]string `json:"arguments"`
			} `json:"params"`
		}
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				t.Errorf("request body: %v", err)
			}
		} else {
			req.Method = r.Method
		}
		mu.Lock()
		log = append(log, seen{req.Method, r.Header.Get("Authorization"), r.Header.Get("Mcp-Name"), req.Params.Name})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q}}`, req.ID, LegacyVersion)
		case "server/discover":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":[%q]}}`, req.ID, ModernVersion)
		case "tools/call":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, req.ID, req.Params.Arguments["message"])
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen { mu.Lock(); defer mu.Unlock(); return slices.Clone(log) }
}

// A gateway's view shows the echo tool under a name of its own and lets
// only callers with a token in: every request carries the bearer token
// (the session's DELETE too), and a call names the tool in its body and,
// in the modern era, in its Mcp-Name header.
func TestDialHTTPWithToolAndBearer(t *testing.T) {
	cases := []struct {
		name       string
		opts       HTTPOptions
		tool, auth string
	}{
		{"defaults", HTTPOptions{}, "echo", ""},
		{"view and token", HTTPOptions{Tool: "say", Bearer: "bench-token"}, "say", "Bearer bench-token"},
	}
	for _, era := range []Era{Legacy, Modern} {
		for _, c := range cases {
			t.Run(string(era)+"/"+c.name, func(t *testing.T) {
				srv, requests := echoServer(t)
				h, err := DialHTTPWith(srv.URL+"/views/v/mcp", era, 1, 5*time.Second, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Call(0, []byte("w00-hello")); err != nil {
					t.Fatal(err)
				}
				h.Close()
				got := requests()
				methods := []string{"server/discover", "tools/call"}
				if era == Legacy {
					methods = []string{"initialize", "notifications/initialized", "tools/call", "DELETE"}
				}
				if len(got) != len(methods) {
					t.Fatalf("requests %+v, want the methods %v", got, methods)
				}
				for i, s := range got {
					if s.Method != methods[i] || s.Auth != c.auth {
						t.Errorf("request %d: %+v, want method %s with Authorization %q", i, s, methods[i], c.auth)
					}
				}
				call := got[slices.IndexFunc(got, func(s seen) bool { return s.Method == "tools/call" })]
				wantHeader := c.tool
				if era == Legacy {
					wantHeader = ""
				}
				if call.Tool != c.tool || call.McpName != wantHeader {
					t.Errorf("tools/call named %q (Mcp-Name %q), want %q (%q)", call.Tool, call.McpName, c.tool, wantHeader)
				}
			})
		}
	}
}

// What cannot go into a request unescaped is refused before anything is
// sent: a tool's name outside the specification's characters, a token
// with a line break (it would end the header block).
func TestDialHTTPWithRefuses(t *testing.T) {
	for _, opts := range []HTTPOptions{
		{Tool: `ec"ho`},
		{Tool: "say hello"},
		{Tool: string(make([]byte, 129))},
		{Bearer: "tok\r\nX-Injected: 1"},
	} {
		srv, requests := echoServer(t)
		if _, err := DialHTTPWith(srv.URL+"/mcp", Legacy, 1, time.Second, opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
		if n := len(requests()); n != 0 {
			t.Errorf("%+v: %d requests sent", opts, n)
		}
	}
}
