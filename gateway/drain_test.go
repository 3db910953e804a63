package gateway

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/protocol"
)

// Told to stop, Serve makes /readyz answer 503 at once and serves on for
// DrainNotice, to a new client too, so that a balancer stops sending it
// requests before it stops accepting them; then it stops.
func TestServeDrainNoticeServesOnUnready(t *testing.T) {
	g, err := New([]*config.Server{child(t, "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- g.Serve(ctx, ln, &ServeOptions{DrainNotice: 3 * time.Second, Drain: time.Second})
	}()
	url := "http://" + ln.Addr().String()
	readyz := func() int {
		t.Helper()
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			t.Fatalf("/readyz: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	rctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := g.Ready(rctx); err != nil {
		t.Fatal(err)
	}
	if got := readyz(); got != http.StatusOK {
		t.Fatalf("/readyz before the stop: %d", got)
	}

	stop()
	for readyz() != http.StatusServiceUnavailable {
		if rctx.Err() != nil {
			t.Fatal("/readyz did not turn 503 after the stop")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	if got := text(t)(c.Call(rctx, "a__echo", map[string]string{"message": "draining"})); got != "draining" {
		t.Errorf("a call while draining got %q", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-rctx.Done():
		t.Fatal("Serve did not return")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("still accepting connections after the drain")
	}
}
