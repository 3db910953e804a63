package server_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// TestConnectSession: Connect returns the session of the connection it
// serves, with no engine type: the session its client initialized,
// which Close stops serving and Wait waits for.
func TestConnectSession(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	defer s.Close()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	ctx := context.Background()
	sess := s.Connect(ctx, a)
	c := jsonrpc2.NewConn(ctx, b, nil)
	defer c.Close()
	params := `{"protocolVersion":"2025-11-25","clientInfo":{"name":"ann","version":"1"},"capabilities":{}}`
	if _, err := c.Call(ctx, "initialize", jsontext.Value(params)); err != nil {
		t.Fatal(err)
	}
	if !sess.Initialized() || sess.ClientInfo().Name != "ann" {
		t.Fatalf("the session Connect returned: initialized %v, client %+v", sess.Initialized(), sess.ClientInfo())
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Wait(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Wait after Close: %v, want jsonrpc.ErrClosed", err)
	}
	<-sess.Done()
	if _, err := c.Call(ctx, "ping", nil); err == nil {
		t.Error("the client's call went through after the session closed")
	}
}
