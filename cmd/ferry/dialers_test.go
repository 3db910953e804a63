package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/websocket"
)

// TestWebSocketServer: ferry reaches a ws:// server, the WebSocket
// transport being one that host is given (dialers), not one it links
// (issue 30, item 4).
func TestWebSocketServer(t *testing.T) {
	h := websocket.NewHandler(testServer(func(string) {}), nil)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, out, errOut := runFerry(t, "", "--format", "json", "tools", "ws"+strings.TrimPrefix(srv.URL, "http"))
	if code != 0 || !strings.Contains(out, `"picture"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
