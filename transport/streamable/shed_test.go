package streamable_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// handshake opens a legacy session as a client at addr (and, when
// caller is set, authenticated as it) with initialize and
// notifications/initialized, and returns its id.
func handshake(t *testing.T, h http.Handler, addr, caller string) string {
	t.Helper()
	post := func(body string, headers map[string]string) *answer {
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader([]byte(body)))
		r.RemoteAddr = addr
		if caller != "" {
			r = r.WithContext(intercept.WithCaller(context.Background(), &intercept.Caller{ID: caller, Issuer: "https://as", Subject: caller}))
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		a := &answer{header: http.Header{}}
		h.ServeHTTP(a, r)
		return a
	}
	a := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize from %s: %d %s", addr, a.status, a.head)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
	return sid
}

// alive counts the sessions of ids still open.
func alive(h http.Handler, ids []string) int {
	n := 0
	for _, sid := range ids {
		a := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
		if a.status == http.StatusOK {
			n++
		}
	}
	return n
}

// TestSheddingSparesOtherClients: a full session table ends the idle
// sessions of the client with the most, so that complete handshakes from
// one address end that client's own sessions, not the others'; an
// authenticated caller keeps 8 of its sessions, even against handshakes
// from many addresses. On b211c63 the longest idle went first, whoever
// opened them: 10,200 handshakes in 5.6 s ended every other client's
// idle session.
func TestSheddingSparesOtherClients(t *testing.T) {
	const max = 100
	for _, tt := range []struct {
		name string
		// caller is the honest sessions' authenticated identity: ten
		// sessions from one address then; without one, ten clients at
		// ten addresses.
		caller    string
		floodAddr func(i int) string
		keep      int
	}{
		{"ten clients, a flood from one address", "", func(int) string { return "198.51.100.1:1000" }, 10},
		{"ten clients, a flood from a /64", "", func(i int) string { return fmt.Sprintf("[2001:db8::%x]:1000", i+1) }, 10},
		{"an authenticated caller, a flood from many addresses", "ann", func(i int) string { return fmt.Sprintf("10.0.%d.%d:1000", i/200, i%200+1) }, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := streamablehandler.New(testServer(), &streamablehandler.Options{MaxSessions: max})
			defer h.Close()
			var honest []string
			for i := range 10 {
				addr := fmt.Sprintf("192.0.2.%d:1000", i+1)
				if tt.caller != "" {
					addr = "192.0.2.1:1000"
				}
				honest = append(honest, handshake(t, h, addr, tt.caller))
			}
			for i := range 3 * max {
				handshake(t, h, tt.floodAddr(i), "")
			}
			if n := alive(h, honest); n < tt.keep {
				t.Errorf("%d of the 10 honest sessions survived %d handshakes, want at least %d", n, 3*max, tt.keep)
			}
			if n := h.Sessions(); n > max {
				t.Errorf("%d sessions open, bound %d", n, max)
			}
		})
	}
}
