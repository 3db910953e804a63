package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/pipenet"
	"github.com/ferrymcp/ferry/transport/httpserver"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// answer is what a client got: an HTTP status, or the error of reading it.
type answer struct {
	status int
	close  bool // Connection: close
	err    error
}

func (a answer) String() string {
	if a.err != nil {
		return a.err.Error()
	}
	return fmt.Sprintf("%d (Connection: close %v)", a.status, a.close)
}

// post sends an initialize on c, with header, and returns the answer and
// the fake time it took.
func post(c net.Conn, header string) (answer, time.Duration) {
	start := time.Now()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s", header, len(initializeBody), initializeBody)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return answer{err: err}, time.Since(start)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return answer{status: resp.StatusCode, close: resp.Close}, time.Since(start)
}

// closedSoon reports whether the server closes c within a second (of
// the fake clock): net/http, after a response with Connection: close,
// closes the connection's writing side at once, but the whole of it only
// half a second later (which in-memory pipes wait for).
func closedSoon(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Second))
	_, err := io.Copy(io.Discard, c)
	c.SetReadDeadline(time.Time{})
	return err == nil
}

// serveGateway serves a gateway with no servers, behind a token, on an
// in-memory listener whose connections all come from 127.0.0.1.
func serveGateway(t *testing.T, http httpserver.Options) (*pipenet.Listener, func()) {
	return serveGatewayWith(t, BearerTokens([]string{"secret"}), http)
}

// serveGatewayWith is serveGateway with auth as its Options.Auth.
func serveGatewayWith(t *testing.T, auth func(http.Handler) http.Handler, http httpserver.Options) (*pipenet.Listener, func()) {
	g, err := New(nil, &Options{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	l := pipenet.Listen()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, l, &ServeOptions{Drain: time.Second, HTTP: http}) }()
	return l, func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// TestClientsWithoutTokenHoldNoPlace: connections without a token, as
// many as the gateway allows, from the same address as the clients with
// one (loopback), keep no client with a token waiting: a 401 closes its
// connection, and a connection that sends nothing gives its place up to
// a new one.
func TestClientsWithoutTokenHoldNoPlace(t *testing.T) {
	tests := []struct {
		name string
		hold func(t *testing.T, c net.Conn)
	}{
		{"refused, then kept", func(t *testing.T, c net.Conn) {
			got, _ := post(c, "")
			if got.status != http.StatusUnauthorized || !got.close {
				t.Errorf("a request without a token: %v, want 401 with Connection: close", got)
			}
			if !closedSoon(c) {
				t.Error("the connection of a 401 is still open")
			}
		}},
		{"silent", func(t *testing.T, c net.Conn) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const maxConns = 4
				l, stop := serveGateway(t, httpserver.Options{MaxConns: maxConns})
				defer stop()
				for range maxConns {
					c := l.Dial()
					defer c.Close()
					tt.hold(t, c)
					synctest.Wait()
				}
				for i := range 2 {
					c := l.Dial()
					defer c.Close()
					got, took := post(c, "Authorization: Bearer secret\r\n")
					if got.status != http.StatusOK || took > 0 {
						t.Errorf("client %d with the token: %v after %v, want 200 at once", i, got, took)
					}
				}
			})
		})
	}
}

// TestTokenShare: one token holds at most its share of the connections
// (half of MaxConns by default); beyond it, 429 and the connection
// closes.
func TestTokenShare(t *testing.T) {
	// A middleware of the user's own, which names the caller with
	// intercept.WithCaller and knows nothing of the listener: the gateway
	// counts the caller's connections all the same.
	own := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer secret" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(intercept.WithCaller(r.Context(), &intercept.Caller{ID: "alice"})))
		})
	}
	for name, auth := range map[string]func(http.Handler) http.Handler{
		"BearerTokens": BearerTokens([]string{"secret"}),
		"own":          own,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, stop := serveGatewayWith(t, auth, httpserver.Options{MaxConns: 4})
				defer stop()
				for i, want := range []int{200, 200, 429} {
					c := l.Dial()
					defer c.Close()
					got, _ := post(c, "Authorization: Bearer secret\r\n")
					if got.status != want {
						t.Fatalf("connection %d: %v, want %d", i, got, want)
					}
					if want == 429 && (!got.close || !closedSoon(c)) {
						t.Errorf("a 429's connection: %v, or it stays open", got)
					}
				}
			})
		})
	}
}
