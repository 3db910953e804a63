package httpsec

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 443}
	opts := &Options{AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"mcp.example.com"}}
	tests := []struct {
		name   string
		local  net.Addr
		host   string
		origin string
		opts   *Options
		ok     bool
	}{
		{"loopback, no origin", loop, "127.0.0.1:8080", "", nil, true},
		{"loopback, localhost", loop, "localhost:8080", "http://localhost:3000", nil, true},
		{"loopback, ipv6", loop, "[::1]:8080", "http://[::1]:5173", nil, true},
		{"rebinding: foreign host", loop, "evil.example:8080", "", nil, false},
		{"rebinding: foreign origin", loop, "127.0.0.1:8080", "http://evil.example", nil, false},
		{"opaque origin", loop, "127.0.0.1:8080", "null", nil, false},
		{"allowed origin", loop, "127.0.0.1:8080", "https://app.example.com", opts, true},
		{"allowed host on loopback", loop, "mcp.example.com", "", opts, true},
		{"public, same-host origin", public, "mcp.example.com", "https://mcp.example.com", nil, true},
		{"public, any host", public, "whatever.example", "", nil, true},
		{"public, foreign origin", public, "mcp.example.com", "https://evil.example", nil, false},
		{"public, allowed-host origin", public, "internal:8080", "https://mcp.example.com", opts, true},
		{"no local address", nil, "evil.example", "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/sse", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
			}
			w := httptest.NewRecorder()
			if got := Check(w, r, tt.opts); got != tt.ok {
				t.Fatalf("Check = %v, want %v", got, tt.ok)
			}
			if !tt.ok {
				if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `"code":-32600`) {
					t.Errorf("refusal: %d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// TestCheckEveryOrigin: a second Origin header cannot slip past a check
// of the first.
func TestCheckEveryOrigin(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	tests := []struct {
		name    string
		origins []string
		ok      bool
	}{
		{"one allowed", []string{"http://localhost:3000"}, true},
		{"allowed then foreign", []string{"http://localhost:3000", "http://evil.example"}, false},
		{"foreign then allowed", []string{"http://evil.example", "http://localhost:3000"}, false},
		{"two allowed", []string{"http://localhost:3000", "http://127.0.0.1:3000"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Host = "127.0.0.1:8080"
			for _, o := range tt.origins {
				r.Header.Add("Origin", o)
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, loop))
			w := httptest.NewRecorder()
			if got := Check(w, r, nil); got != tt.ok {
				t.Fatalf("Check(%q) = %v, want %v (%s)", tt.origins, got, tt.ok, w.Body)
			}
		})
	}
}
