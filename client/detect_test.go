package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// TestDetectRestrictedServer checks detection against servers that serve
// only some revisions. A dual-era implementation restricted to legacy
// revisions (ferry's with Options.Versions, the official Go SDK's with
// SupportedProtocolVersions, found by the interop tests) answers the
// probe with an UnsupportedProtocolVersionError listing legacy revisions
// only: the client must use one of them, through initialize, rather than
// give up.
func TestDetectRestrictedServer(t *testing.T) {
	cases := []struct {
		name      string
		versions  []string
		pin       string
		want      string // "" = Connect fails
		stateless bool
	}{
		{"legacy only", []string{protocol.Version20251125, protocol.Version20250618}, "", protocol.Version20251125, false},
		{"old legacy only", []string{protocol.Version20250326}, "", protocol.Version20250326, false},
		{"stateless only", []string{protocol.Version20260728}, "", protocol.Version20260728, true},
		{"legacy only, stateless pinned", []string{protocol.Version20251125}, protocol.Version20260728, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testServer(&server.Options{Versions: c.versions})
			if c.want == "" {
				a, b := memory.NewPipe(jsonrpc.Limits{})
				conn := s.Connect(context.Background(), a)
				defer func() { conn.Close(); conn.Wait() }()
				_, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, &client.Options{ProtocolVersion: c.pin})
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeUnsupportedProtocolVersion {
					t.Fatalf("Connect: err = %v, want an UnsupportedProtocolVersionError", err)
				}
				return
			}
			cl := connect(t, s, &client.Options{ProtocolVersion: c.pin})
			if cl.ProtocolVersion() != c.want || cl.Stateless() != c.stateless {
				t.Fatalf("speaks %s (stateless %v), want %s (stateless %v)", cl.ProtocolVersion(), cl.Stateless(), c.want, c.stateless)
			}
			res, err := cl.Call(context.Background(), "echo", map[string]string{"message": "hi"})
			if err != nil || len(res.Content) != 1 || res.Content[0].Text != "hi" {
				t.Fatalf("echo = %+v, %v", res, err)
			}
		})
	}
}

// TestDiscoverRetriesAdvertisedVersion checks that a client whose
// server/discover is refused with an UnsupportedProtocolVersionError that
// lists the very version it asked for retries once with that version
// ("select a mutually supported version from the supported list and
// retry the request"), pinned or not, and gives up if the retry is
// refused too.
func TestDiscoverRetriesAdvertisedVersion(t *testing.T) {
	for _, c := range []struct {
		name    string
		pin     string
		refuse  int // discovers refused before one is answered
		wantErr bool
	}{
		{"pinned, refused once", protocol.Version20260728, 1, false},
		{"detect, refused once", "", 1, false},
		{"pinned, always refused", protocol.Version20260728, 100, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := memory.NewPipe(jsonrpc.Limits{})
			defer a.Close()
			attempts := make(chan string, 10)
			go func() {
				for n := 0; ; n++ {
					m, err := a.Read()
					if err != nil {
						return
					}
					if m.Method != protocol.MethodDiscover {
						a.Write(context.Background(), &jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "no")})
						continue
					}
					attempts <- jsonrpc2.Meta(m).ProtocolVersion
					if n < c.refuse {
						a.Write(context.Background(), &jsonrpc.Message{ID: m.ID, Error: &jsonrpc.Error{
							Code: protocol.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version",
							Data: []byte(`{"supported":["2026-07-28"],"requested":"2026-07-28"}`)}})
						continue
					}
					a.Write(context.Background(), &jsonrpc.Message{ID: m.ID, Result: []byte(
						`{"resultType":"complete","ttlMs":0,"cacheScope":"private","supportedVersions":["2026-07-28"],"capabilities":{}}`)})
				}
			}()
			cl, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, &client.Options{ProtocolVersion: c.pin})
			if c.wantErr {
				if err == nil {
					cl.Close()
					t.Fatal("Connect succeeded against a server that refuses every version")
				}
				if n := len(attempts); n != 2 {
					t.Fatalf("%d discover attempts, want 2", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if !cl.Stateless() || cl.ProtocolVersion() != protocol.Version20260728 {
				t.Fatalf("speaks %s (stateless %v)", cl.ProtocolVersion(), cl.Stateless())
			}
			for i := 0; i < 2; i++ {
				if v := <-attempts; v != protocol.Version20260728 {
					t.Fatalf("attempt %d asked for %q", i, v)
				}
			}
		})
	}
}
