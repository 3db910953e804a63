package websocket_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/websocket"
)

// The upgrade request follows no redirect to another origin: the
// Transport's Header (an API key) would go to a host the server chose.
func TestUpgradeRedirectStaysOnOrigin(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer elsewhere.Close()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer server.Close()

	tr := &websocket.Transport{URL: "ws" + strings.TrimPrefix(server.URL, "http") + "/mcp", Header: http.Header{"X-Api-Key": {"secret-key"}}}
	_, err := tr.Open(context.Background())
	if err == nil {
		t.Fatal("Open followed the redirect to another origin")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other origin got %d requests, want 0", n)
	}
	if strings.Contains(err.Error(), "secret-key") {
		t.Errorf("the error names the key: %v", err)
	}
}
