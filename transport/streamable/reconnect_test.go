package streamable_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/pipenet"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// impatientServer is a legacy server whose GET stream sends what stream
// returns, then ends; it counts the GETs.
func impatientServer(gets *atomic.Int64, stream func(n int64) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		switch r.Method {
		case http.MethodGet:
			n := gets.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, stream(n))
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"initialize"`) {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"impatient","version":"1"}}}`)
		}
	})
}

// inBubble connects a client to h over in-memory connections, inside the
// synctest bubble of the caller.
func inBubble(t *testing.T, h http.Handler) (*client.Client, func()) {
	l := pipenet.Listen()
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return l.Dial(), nil
	}}}
	c, err := client.Connect(context.Background(), &streamable.Transport{URL: "http://127.0.0.1/mcp", Client: hc},
		&client.Options{ProtocolVersion: protocol.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() {
		c.Close()
		srv.Close()
		hc.CloseIdleConnections()
	}
}

// TestReconnectBackoff: a server that ends the legacy GET stream at once,
// asking for a retry of 1 ms, gets a few reconnections a minute, not
// thousands a second (on a12c33f: 10,000 in the first 10 s, for ever);
// one that asks for a day is reconnected to within 30 s.
func TestReconnectBackoff(t *testing.T) {
	t.Run("retry 1 ms", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var gets atomic.Int64
			_, stop := inBubble(t, impatientServer(&gets, func(int64) string { return "retry: 1\n\n" }))
			start := gets.Load()
			time.Sleep(10 * time.Second)
			first := gets.Load() - start
			time.Sleep(50 * time.Second)
			minute := gets.Load() - start
			stop()
			t.Logf("retry: 1 and an empty stream: %d reconnections in 10 s, %d in a minute", first, minute)
			if first > 10 || minute > 15 {
				t.Errorf("%d reconnections in 10 s, %d in a minute", first, minute)
			}
		})
	})
	t.Run("retry a day", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var gets atomic.Int64
			_, stop := inBubble(t, impatientServer(&gets, func(n int64) string {
				return fmt.Sprintf("id: %d\nretry: 86400000\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n", n)
			}))
			start := gets.Load()
			time.Sleep(31 * time.Second)
			n := gets.Load() - start
			stop()
			t.Logf("retry: 86400000 after a message: %d reconnections in 31 s", n)
			if n < 1 || n > 2 {
				t.Errorf("%d reconnections in 31 s, want 1 (at 30 s)", n)
			}
		})
	})
}
