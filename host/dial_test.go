package host

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/websocket"
)

// TestDialers: a WebSocket entry is reached through the Dialer the
// program gives for its URL's scheme, with the entry's headers; without
// one it fails as a configuration error that names the missing
// transport, and is not restarted (issue 30, item 4: host linked the
// WebSocket library for every program).
func TestDialers(t *testing.T) {
	wsh := websocket.NewHandler(testServer("ws"), nil)
	defer wsh.Close()
	srv := httptest.NewServer(wsh)
	defer srv.Close()
	entry := &config.Server{Name: "ws", Transport: config.WebSocket, URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Headers: map[string]string{"X-Entry": "yes"}}

	var sawHeader string
	dial := func(ctx context.Context, d Dial) (jsonrpc.Stream, error) {
		sawHeader = d.Header.Get("X-Entry")
		return (&websocket.Transport{URL: d.URL, Client: d.Client, Header: d.Header, Logger: d.Logger}).Open(ctx)
	}
	for _, tc := range []struct {
		name    string
		dialers map[string]Dialer
		want    ErrorKind // 0: ready
	}{
		{"dialer", map[string]Dialer{"ws": dial}, 0},
		{"none", nil, KindConfig},
		{"other scheme only", map[string]Dialer{"wss": dial}, KindConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New([]*config.Server{entry}, &Options{ConnectTimeout: 10 * time.Second, Restart: Backoff{Initial: time.Hour}, Dialers: tc.dialers})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			h.Start(t.Context())
			s, _ := h.Server("ws")
			st := s.Status()
			if tc.want == 0 {
				if st.State != Ready || st.Transport != config.WebSocket || sawHeader != "yes" {
					t.Fatalf("status %s over %q (%v), header %q; want ready over websocket with the entry's header", st.State, st.Transport, st.Err, sawHeader)
				}
				res, err := h.Call(t.Context(), "ws__echo", map[string]any{"message": "hi"})
				if err != nil || len(res.Content) == 0 {
					t.Fatalf("call: %v, %v", res, err)
				}
				return
			}
			if KindOf(st.Err) != tc.want || !strings.Contains(st.Err.Error(), "host.Options.Dialers") || !st.RetryAt.IsZero() {
				t.Errorf("err %v (kind %v), retry at %v; want kind %v naming host.Options.Dialers, no retry", st.Err, KindOf(st.Err), st.RetryAt, tc.want)
			}
		})
	}
}
