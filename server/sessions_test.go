package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// A server whose lists change outside its registries (a gateway) tells
// its clients with NotifyListChanged, finds its sessions with Sessions,
// and learns of a session's end from Done.
func TestSessionsAndNotifyListChanged(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{
		Capabilities: &protocol.ServerCapabilities{Tools: &protocol.ToolsCapability{ListChanged: true}},
	})
	a, b := memory.NewPipe(jsonrpc.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, a)
	changed := make(chan string, 1)
	c, err := client.Connect(ctx, client.StreamTransport{Stream: b}, &client.Options{
		ProtocolVersion: protocol.LatestLegacyVersion,
		OnListChanged:   func(m string) { changed <- m },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil { // initialized has been handled once ping is answered
		t.Fatal(err)
	}
	sessions := s.Sessions()
	if len(sessions) != 1 {
		t.Fatalf("Sessions() = %d sessions, want 1", len(sessions))
	}
	s.NotifyListChanged(protocol.NotificationToolsListChanged)
	select {
	case m := <-changed:
		if m != protocol.NotificationToolsListChanged {
			t.Errorf("got %s", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no list change reached the client")
	}
	select {
	case <-sessions[0].Done():
		t.Fatal("Done before the session ended")
	default:
	}
	c.Close()
	select {
	case <-sessions[0].Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the client went away")
	}
	if n := len(s.Sessions()); n != 0 {
		t.Errorf("Sessions() = %d after the end, want 0", n)
	}
}
