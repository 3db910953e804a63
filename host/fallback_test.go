package host

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/transport/ssehandler"
)

// TestSSEFallbackIsShown: an http entry whose server speaks only
// HTTP+SSE is reached through the fallback, and its status says sse
// (issue 19, item 10: it said http).
func TestSSEFallbackIsShown(t *testing.T) {
	h := ssehandler.New(testServer("legacy"), nil)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	hst, err := New([]*config.Server{{Name: "legacy", Transport: config.HTTP, URL: srv.URL + "/sse"}}, &Options{ConnectTimeout: 10 * time.Second, Restart: Backoff{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer hst.Close()
	if err := hst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := hst.Server("legacy")
	if st := s.Status(); st.State != Ready || st.Transport != config.SSE {
		t.Errorf("status %s over %q, want ready over sse", st.State, st.Transport)
	}
}
