package access_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

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
// then NAME2) and whose tool "touch" updates its resource doc://NAME
// followed by the path it is given (doc://NAME, doc://NAME/open).
func speaker(t *testing.T, name string) *config.Server {
	s := server.New(protocol.Implementation{Name: name, Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "speak"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		req.Log(ctx, protocol.LevelInfo, name+"1", "the first thing "+name+" says")
		req.Log(ctx, protocol.LevelInfo, name+"2", "the second")
		return "spoke", nil
	})
	for _, uri := range []string{"doc://" + name, "doc://" + name + "/open"} {
		s.AddResource(&protocol.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "x"}}}, nil
		})
	}
	server.AddTool(s, &protocol.Tool{Name: "touch"}, func(ctx context.Context, req *server.Request, in struct {
		Path string `json:"path,omitempty"`
	}) (string, error) {
		s.ResourceUpdated(ctx, "doc://"+name+in.Path)
		return "touched", nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL}
}

// A server's log messages reach only the sessions whose callers may use
// something of it, and its resources' updates only the clients whose
// callers may read them, under the rules in force when they come: the
// guest, who may use a's tools and nothing of b, hears a and not b; the
// admin hears both; once the rules no longer let the guest read doc://a,
// neither its legacy session nor its stateless listen stream hears
// doc://a's updates they subscribed to before. (Log messages outside a
// request are the legacy era's: a stateless server's are the request's
// own, which the rules decided on.)
//
// That a client heard nothing is seen from what it hears next: the
// gateway passes on what one stream of a server sends one at a time, in
// order, so once the admin heard a later message of that stream, the
// guest would already have been sent the earlier one.
func TestLogsAndUpdatesFollowTheRules(t *testing.T) {
	policy := func(guestReads ...string) *access.Policy {
		t.Helper()
		p, err := access.Compile(&config.Access{Rules: []config.AccessRule{
			{Allow: &config.Condition{Roles: []string{"admin"}}, Tools: []string{"*"}, Resources: []string{"*"}},
			{Allow: &config.Condition{}, Tools: []string{"a__*"}, Resources: guestReads},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	live := access.NewLive(policy("doc://a", "doc://a/open"))
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
	header := func(caller, roles string) map[string][]string {
		return map[string][]string{"X-Caller": {caller}, "X-Roles": {roles}}
	}
	heard := func(caller, roles string) (*client.Client, chan string) {
		ch := make(chan string, 20)
		c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp", Header: header(caller, roles)},
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
		for _, uri := range []string{"doc://a", "doc://a/open", "doc://b"} {
			if _, err := c.Subscribe(ctx, uri); err != nil && roles == "admin" {
				t.Fatal(err)
			}
		}
		return c, ch
	}
	expect := func(ch chan string, who string, want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case got := <-ch:
				if got != w {
					t.Fatalf("%s heard %q, want %q", who, got, w)
				}
			case <-ctx.Done():
				t.Fatalf("%s did not hear %q", who, w)
			}
		}
	}
	admin, adminHeard := heard("root", "admin")
	guest, guestHeard := heard("guest", "")
	if _, err := guest.Subscribe(ctx, "doc://b"); err == nil {
		t.Error("the guest subscribed to a resource of b")
	}
	stateless, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp", Header: header("guest", "")},
		&client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stateless.Close() })
	listen, err := stateless.Listen(ctx, protocol.SubscriptionFilter{ResourceSubscriptions: []string{"doc://a", "doc://a/open"}})
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Close()
	listened := make(chan string, 20)
	go func() {
		for m := range listen.Events() {
			var p protocol.ResourceUpdatedParams
			json.Unmarshal(m.Params, &p)
			listened <- "updated " + p.URI
		}
	}()

	call(t, admin, "b__speak", nil)
	expect(adminHeard, "the admin", "log b1", "log b2")
	call(t, guest, "a__speak", nil)
	expect(guestHeard, "the guest", "log a1", "log a2") // b's first log would come first
	call(t, admin, "b__touch", nil)
	expect(adminHeard, "the admin", "log a1", "log a2", "updated doc://b")
	call(t, guest, "a__touch", nil)
	expect(guestHeard, "the guest", "updated doc://a")
	expect(adminHeard, "the admin", "updated doc://a")
	expect(listened, "the guest's listen stream", "updated doc://a")

	// The rules read again: doc://a is no longer the guest's to read.
	live.Set(policy("doc://a/open"))
	call(t, admin, "a__touch", nil)
	call(t, admin, "a__touch", nil)
	expect(adminHeard, "the admin", "updated doc://a", "updated doc://a")
	call(t, admin, "a__touch", map[string]string{"path": "/open"})
	expect(guestHeard, "the guest", "updated doc://a/open")
	expect(listened, "the guest's listen stream", "updated doc://a/open")
}

func call(t *testing.T, c *client.Client, tool string, args any) {
	t.Helper()
	res, err := c.Call(context.Background(), tool, args)
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
}
