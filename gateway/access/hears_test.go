package access_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// speaker serves a server whose tool "speak" logs twice (loggers NAME1,
// then NAME2) and whose tool "touch" updates its resource doc://NAME.
func speaker(t *testing.T, name string) *config.Server {
	s := server.New(protocol.Implementation{Name: name, Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "speak"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		req.Log(ctx, protocol.LevelInfo, name+"1", "the first thing "+name+" says")
		req.Log(ctx, protocol.LevelInfo, name+"2", "the second")
		return "spoke", nil
	})
	uri := "doc://" + name
	s.AddResource(&protocol.Resource{URI: uri, Name: name}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "x"}}}, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "touch"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		s.ResourceUpdated(ctx, uri)
		return "touched", nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL}
}

// A server's log messages reach only the sessions whose callers may use
// something of it, and its resources' updates only those whose callers
// may read them: the guest, who may use a's tools and nothing of b,
// hears a and not b; the admin hears both. (Log messages outside a
// request are the legacy era's: a stateless server's are the request's
// own, which the rules decided on.)
func TestLogsAndUpdatesFollowTheRules(t *testing.T) {
	p, err := access.Compile(&config.Access{Rules: []config.AccessRule{
		{Allow: &config.Condition{Roles: []string{"admin"}}, Tools: []string{"*"}, Resources: []string{"*"}},
		{Allow: &config.Condition{}, Tools: []string{"a__*"}, Resources: []string{"doc://a"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	live := access.NewLive(p)
	g, err := gateway.New([]*config.Server{speaker(t, "a"), speaker(t, "b")}, &gateway.Options{
		Auth: headerAuth, Middleware: []intercept.Middleware{live.Middleware()}, Hears: live.Hears,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		g.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	heard := func(caller, roles string) (*client.Client, chan string) {
		ch := make(chan string, 20)
		c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp", Header: map[string][]string{"X-Caller": {caller}, "X-Roles": {roles}}},
			&client.Options{ProtocolVersion: protocol.LatestLegacyVersion, LogLevel: protocol.LevelDebug,
				OnLog:             func(p *protocol.LoggingMessageParams) { ch <- "log " + p.Logger },
				OnResourceUpdated: func(uri string) { ch <- "updated " + uri }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := client.Collect(c.Tools(ctx)); err != nil { // what the endpoint shows, as a client lists it
			t.Fatal(err)
		}
		return c, ch
	}
	next := func(ch chan string, who string) string {
		t.Helper()
		select {
		case s := <-ch:
			return s
		case <-ctx.Done():
			t.Fatalf("%s heard nothing", who)
			return ""
		}
	}
	admin, adminHeard := heard("root", "admin")
	guest, guestHeard := heard("guest", "")

	if _, err := guest.Subscribe(ctx, "doc://b"); err == nil {
		t.Error("the guest subscribed to a resource of b")
	}
	for _, c := range []*client.Client{admin, guest} {
		if _, err := c.Subscribe(ctx, "doc://a"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Subscribe(ctx, "doc://b"); err != nil {
		t.Fatal(err)
	}
	// b's second log reaching the admin means that the gateway is done
	// with its first (it passes a server's notifications on one at a
	// time, in order), which the guest would then have been sent before
	// anything a says next.
	text(t, admin, "b__speak")
	text(t, admin, "b__touch")
	for _, want := range []string{"log b1", "log b2", "updated doc://b"} {
		if got := next(adminHeard, "the admin"); got != want {
			t.Fatalf("the admin heard %q, want %q", got, want)
		}
	}
	text(t, guest, "a__speak")
	text(t, guest, "a__touch")
	for _, want := range []string{"log a1", "log a2", "updated doc://a"} {
		if got := next(guestHeard, "the guest"); got != want {
			t.Fatalf("the guest heard %q, want %q (b's are not the guest's to hear)", got, want)
		}
	}
}

func text(t *testing.T, c *client.Client, tool string) {
	t.Helper()
	res, err := c.Call(context.Background(), tool, nil)
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
}
