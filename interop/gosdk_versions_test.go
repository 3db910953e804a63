package interop

// Era detection between ferry and go-sdk v1.8.0 when one side serves only
// some protocol versions (go-sdk: ServerOptions.SupportedProtocolVersions;
// ferry: server.Options.Versions), in process over OS pipes.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/interop/gosdkserver"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

var (
	legacyOnly    = []string{protocol.Version20251125, protocol.Version20250618}
	statelessOnly = []string{protocol.Version20260728}
)

// TestGoSDKServerVersionsFerryClient connects ferry's client to go-sdk
// servers restricted to some versions.
//
// A go-sdk server restricted to legacy versions answers ferry's
// server/discover probe with an UnsupportedProtocolVersionError whose
// supported list holds only those (ServerSession.handle): ferry must then
// use one of them through initialize (fixed in client.handshake; before,
// detection gave up).
//
// A go-sdk server restricted to 2026-07-28 still answers initialize, with
// 2025-11-25 (ServerOptions.SupportedProtocolVersions: "so that the client
// disconnects"), where the specification says such a server "SHOULD name
// the protocol versions it supports in any error it returns to an
// initialize request". ferry speaks 2025-11-25, so it does not disconnect,
// and the go-sdk then serves the session in 2025-11-25 after all.
func TestGoSDKServerVersionsFerryClient(t *testing.T) {
	cases := []struct {
		name     string
		versions []string
		pin      string
		want     string // "" = Connect fails with an UnsupportedProtocolVersionError
	}{
		{"legacy-only/detect", legacyOnly, "", protocol.Version20251125},
		{"legacy-only/2025-06-18", legacyOnly, protocol.Version20250618, protocol.Version20250618},
		{"legacy-only/2026-07-28", legacyOnly, protocol.Version20260728, ""},
		{"stateless-only/detect", statelessOnly, "", protocol.Version20260728},
		{"stateless-only/2025-11-25", statelessOnly, protocol.Version20251125, protocol.Version20251125},
		{"stateless-only/2025-06-18", statelessOnly, protocol.Version20250618, protocol.Version20251125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			clientR, clientW, serverR, serverW := gosdkPipes(t)
			ss, err := gosdkserver.NewVersions(c.versions).Connect(ctx, &mcp.IOTransport{Reader: serverR, Writer: serverW}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cl, err := client.Connect(ctx, client.StreamTransport{Stream: stdio.NewServerStream(clientR, clientW, jsonrpc.Limits{})},
				&client.Options{ProtocolVersion: c.pin, ProbeTimeout: 10 * time.Second})
			if c.want == "" {
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeUnsupportedProtocolVersion {
					t.Fatalf("Connect: err = %v, want an UnsupportedProtocolVersionError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cl.Close()
			if cl.ProtocolVersion() != c.want || cl.Stateless() != protocol.IsStateless(c.want) {
				t.Fatalf("ferry speaks %s (stateless %v), want %s", cl.ProtocolVersion(), cl.Stateless(), c.want)
			}
			res, err := cl.Call(ctx, "echo", map[string]string{"message": "restricted"})
			if err != nil || ferryText(t, res) != "restricted" {
				t.Fatalf("echo = %+v, %v", res, err)
			}
		})
	}
}

// TestGoSDKClientVersionsFerryServer connects the go-sdk client to ferry
// servers restricted to some versions. ferry answers a probe it cannot
// serve with an UnsupportedProtocolVersionError listing its versions, on
// which go-sdk falls back to initialize when they are all legacy
// (Client.Connect retries discover only with a version >= 2026-07-28); a
// stateless-only ferry rejects initialize, naming its versions.
func TestGoSDKClientVersionsFerryServer(t *testing.T) {
	cases := []struct {
		name     string
		versions []string
		request  string
		want     string // "" = Connect fails
	}{
		{"legacy-only/default", legacyOnly, "", protocol.Version20251125},
		{"legacy-only/2025-06-18", legacyOnly, protocol.Version20250618, protocol.Version20250618},
		// Not served: ferry answers with the newest legacy version it has.
		{"legacy-only/2025-03-26", legacyOnly, protocol.Version20250326, protocol.Version20251125},
		{"stateless-only/default", statelessOnly, "", protocol.Version20260728},
		{"stateless-only/2025-11-25", statelessOnly, protocol.Version20251125, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			clientR, clientW, serverR, serverW := gosdkPipes(t)
			srv := server.New(protocol.Implementation{Name: "ferry-restricted", Version: "0.1.0"}, &server.Options{Versions: c.versions})
			server.AddTool(srv, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
				Message string `json:"message"`
			}) (string, error) {
				return in.Message, nil
			})
			conn := srv.Connect(ctx, stdio.NewServerStream(serverR, serverW, jsonrpc.Limits{}))
			defer func() {
				conn.Close()
				conn.Wait()
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-interop", Version: goSDKVersion}, nil).
				Connect(ctx, &mcp.IOTransport{Reader: clientR, Writer: clientW}, &mcp.ClientSessionOptions{ProtocolVersion: c.request})
			if c.want == "" {
				if err == nil {
					cs.Close()
					t.Fatal("Connect succeeded")
				}
				if !strings.Contains(err.Error(), "supports only the stateless protocol versions 2026-07-28") {
					t.Errorf("Connect: err = %v, want ferry's error naming its versions", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != c.want {
				t.Fatalf("go-sdk speaks %s, want %s", got, c.want)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "restricted"}})
			if err != nil || goSDKText(t, res) != "restricted" {
				t.Fatalf("echo = %+v, %v", res, err)
			}
		})
	}
}
