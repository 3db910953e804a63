package server_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	tools, err := client.Collect(c.Tools(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestSessionTools: a session's own tools are listed and callable in that
// session only; another session and stateless requests see the server's.
func TestSessionTools(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{
		InitializedHandler: func(ctx context.Context, sess *server.Session) {
			if sess.ClientInfo().Name != "alice" {
				return
			}
			server.AddSessionTool(sess, &protocol.Tool{Name: "mine"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				return "alice's tool", nil
			})
			// A session tool takes the place of the server's of that name.
			server.AddSessionTool(sess, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				return "alice's echo", nil
			})
		}})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "echo", nil
	})
	changed := make(chan string, 8)
	alice := connectPipe(t, s, &client.Options{ProtocolVersion: protocol.Version20251125,
		Info: protocol.Implementation{Name: "alice", Version: "1"}, OnListChanged: func(m string) { changed <- m }})
	bob := connectPipe(t, s, &client.Options{ProtocolVersion: protocol.Version20251125, Info: protocol.Implementation{Name: "bob", Version: "1"}})
	stateless := connectPipe(t, s, &client.Options{ProtocolVersion: protocol.Version20260728, Info: protocol.Implementation{Name: "alice", Version: "1"}})

	// The tools come with the initialized notification, served in order
	// with alice's next messages: wait for them.
	for deadline := time.Now().Add(5 * time.Second); !slices.Contains(toolNames(t, alice), "mine") && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for _, tc := range []struct {
		name  string
		c     *client.Client
		tools []string
		echo  string
	}{
		{"alice", alice, []string{"echo", "mine"}, "alice's echo"},
		{"bob", bob, []string{"echo"}, "echo"},
		{"stateless", stateless, []string{"echo"}, "echo"},
	} {
		if got := toolNames(t, tc.c); !slices.Equal(got, tc.tools) {
			t.Errorf("%s lists %v, want %v", tc.name, got, tc.tools)
		}
		res, err := tc.c.Call(context.Background(), "echo", nil)
		if err != nil || res.Content[0].Text != tc.echo {
			t.Errorf("%s: echo: %+v %v", tc.name, res, err)
		}
		res, err = tc.c.Call(context.Background(), "mine", nil)
		var je *jsonrpc.Error
		if tc.name == "alice" {
			if err != nil || res.Content[0].Text != "alice's tool" {
				t.Errorf("alice: mine: %+v %v", res, err)
			}
		} else if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: mine: %+v %v, want unknown tool", tc.name, res, err)
		}
	}
	select {
	case m := <-changed:
		if m != protocol.NotificationToolsListChanged {
			t.Errorf("alice was told %s", m)
		}
	case <-time.After(5 * time.Second):
		t.Error("alice was not told her tools changed")
	}
	for _, sess := range s.Sessions() {
		if sess.ClientInfo().Name == "alice" {
			sess.RemoveTools("mine", "echo")
		}
	}
	if got := toolNames(t, alice); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("after RemoveTools alice lists %v", got)
	}
}
