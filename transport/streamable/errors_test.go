package streamable_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/httperr"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// httpClients are the two ways the Transport makes its POSTs: its own
// lean HTTP/1.1 client (no Client given) and net/http's.
var httpClients = []struct {
	name   string
	client func() *http.Client
}{
	{"lean", func() *http.Client { return nil }},
	{"net/http", func() *http.Client { return &http.Client{} }},
}

// wentAway reports whether err says the server went away, keeping the
// network's own error, and is not taken for a JSON-RPC error answer.
func wentAway(err error) bool {
	var je *jsonrpc.Error
	if err == nil || errors.As(err, &je) {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// TestClientErrorsKeepCause: a transport failure is never a JSON-RPC
// error answer. A refused connection and a server killed mid-session keep
// the network's error; a refusal by HTTP status is a *httperr.StatusError
// with its status, WWW-Authenticate and the text of its body; a JSON-RPC
// error answer stays a *jsonrpc.Error.
func TestClientErrorsKeepCause(t *testing.T) {
	for _, hc := range httpClients {
		t.Run(hc.name, func(t *testing.T) {
			t.Run("connection refused", func(t *testing.T) {
				leakcheck.Check(t)
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				url := "http://" + l.Addr().String() + "/mcp"
				l.Close()
				_, err = client.Connect(t.Context(), &streamable.Transport{URL: url, Client: hc.client()}, nil)
				var je *jsonrpc.Error
				if !errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &je) {
					t.Fatalf("Connect: %v (%T), want ECONNREFUSED and no *jsonrpc.Error", err, err)
				}
			})
			for _, v := range []string{protocol.Version20260728, protocol.Version20251125} {
				t.Run("server killed "+v, func(t *testing.T) {
					leakcheck.Check(t)
					ts, h := newHTTPServer(t, nil)
					c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: v}, &streamable.Transport{Client: hc.client(), DisableGETStream: true})
					h.Close()
					ts.CloseClientConnections()
					ts.Close()
					_, err := c.Call(t.Context(), "echo", map[string]string{"message": "x"})
					if !wentAway(err) {
						t.Fatalf("call after the server died: %v (%T)", err, err)
					}
				})
				t.Run("server dies mid-answer "+v, func(t *testing.T) {
					leakcheck.Check(t)
					ts := serveWrapped(t, func(w http.ResponseWriter, r *http.Request) bool {
						if !isCall(r) {
							return false
						}
						if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
							conn.Close()
						}
						return true
					})
					c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: v}, &streamable.Transport{Client: hc.client(), DisableGETStream: true})
					_, err := c.Call(t.Context(), "echo", map[string]string{"message": "x"})
					if !wentAway(err) {
						t.Fatalf("call: %v (%T)", err, err)
					}
				})
				t.Run("refused by status "+v, func(t *testing.T) {
					leakcheck.Check(t)
					ts := serveWrapped(t, func(w http.ResponseWriter, r *http.Request) bool {
						if !isCall(r) {
							return false
						}
						w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="notes:write"`)
						w.Header().Set("Content-Type", "text/html")
						w.WriteHeader(http.StatusForbidden)
						io.WriteString(w, "<html><head><title>403 Forbidden</title></head><body><center><h1>403 Forbidden</h1></center><hr><center>nginx</center></body></html>\n")
						return true
					})
					c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: v}, &streamable.Transport{Client: hc.client(), DisableGETStream: true})
					_, err := c.Call(t.Context(), "echo", map[string]string{"message": "x"})
					var se *httperr.StatusError
					var je *jsonrpc.Error
					if !errors.As(err, &se) || errors.As(err, &je) {
						t.Fatalf("call: %v (%T), want a *httperr.StatusError only", err, err)
					}
					if se.StatusCode != 403 || se.Method != "POST" || se.URL != ts.URL ||
						se.WWWAuthenticate != `Bearer error="insufficient_scope", scope="notes:write"` ||
						se.Body != "403 Forbidden 403 Forbidden nginx" {
						t.Errorf("status error %+v", se)
					}
					// A JSON-RPC error answer is one, and nothing else.
					_, err = c.GetPrompt(t.Context(), "no-such-prompt", nil)
					se = nil
					if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || errors.As(err, &se) {
						t.Errorf("unknown prompt: %v (%T), want a *jsonrpc.Error only", err, err)
					}
				})
			}
			t.Run("unauthorized", func(t *testing.T) {
				leakcheck.Check(t)
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
					http.Error(w, "missing bearer token", http.StatusUnauthorized)
				}))
				defer ts.Close()
				_, err := client.Connect(t.Context(), &streamable.Transport{URL: ts.URL, Client: hc.client()}, nil)
				var se *httperr.StatusError
				var je *jsonrpc.Error
				if !errors.As(err, &se) || errors.As(err, &je) || se.StatusCode != 401 || se.Body != "missing bearer token" ||
					!strings.Contains(se.WWWAuthenticate, "resource_metadata=") {
					t.Fatalf("Connect: %v (%T), want a 401 *httperr.StatusError", err, err)
				}
			})
		})
	}
}

// serveWrapped serves the test server over Streamable HTTP behind
// intercept, which answers the requests it returns true for.
func serveWrapped(t *testing.T, intercept func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	h := streamablehandler.New(testServer(), nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// isCall tells a tools/call POST in either era (the legacy one carries
// no Mcp-Method header).
func isCall(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	if m := r.Header.Get("Mcp-Method"); m != "" {
		return m == "tools/call"
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	return strings.Contains(string(body), `"method":"tools/call"`)
}
