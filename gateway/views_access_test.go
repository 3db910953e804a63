package gateway_test

// Access rules (gateway/access) on a view: a rule written for /mcp's
// SERVER__TOOL holds for the view's name of the tool, and a rule about
// VIEW:NAME for that view only. (A test of package gateway cannot import
// gateway/access, which imports it.)

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func TestViewAccessRules(t *testing.T) {
	up := server.New(protocol.Implementation{Name: "a", Version: "1"}, nil)
	for _, name := range []string{"echo", "whoami", "secret"} {
		server.AddTool(up, &protocol.Tool{Name: name}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return name, nil })
	}
	uh := streamablehandler.New(up, nil)
	us := httptest.NewServer(uh)
	t.Cleanup(func() { uh.Close(); us.CloseClientConnections(); us.Close() })

	f, err := config.Parse("ferry.json", []byte(`{"mcpServers": {},
		"views": {"support": {"tools": {"a__echo": {"name": "say"}, "a__whoami": {"name": "who"}, "a__secret": {}}}},
		"access": {"default": "deny", "rules": [
			{"description": "support uses echo and whoami", "allow": {"roles": ["support"]}, "tools": ["a__echo", "a__whoami"]},
			{"description": "not who on the support view", "deny": {}, "tools": ["support:who"]}
		]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := config.ReadViews([]*config.File{f}, config.Vars{})
	if err != nil {
		t.Fatal(err)
	}
	views, err := view.New(cv)
	if err != nil {
		t.Fatal(err)
	}
	var ac config.Access
	if _, err := f.Section("access", &ac); err != nil {
		t.Fatal(err)
	}
	rules, err := access.Compile(&ac)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New([]*config.Server{{Name: "a", Transport: config.HTTP, URL: us.URL}}, &gateway.Options{
		Views:      views,
		Auth:       gateway.BearerCallers([]gateway.Token{{Token: "sam-token", Caller: "sam", Roles: []string{"support"}}}),
		Middleware: []intercept.Middleware{access.NewLive(rules).Middleware()},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	// Cleanups run last first: the clients', then these, then the server's.
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); g.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	names := func(path string) (*client.Client, []string) {
		t.Helper()
		c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + path, Header: map[string][]string{"Authorization": {"Bearer sam-token"}}},
			&client.Options{ProtocolVersion: protocol.Version20260728})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		tools, err := client.Collect(c.Tools(ctx))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name)
		}
		return c, out
	}
	if _, got := names("/mcp"); !slices.Equal(got, []string{"a__echo", "a__whoami"}) {
		t.Errorf("/mcp lists %q", got)
	}
	c, got := names("/views/support/mcp")
	if !slices.Equal(got, []string{"say"}) {
		t.Errorf("the view lists %q", got)
	}
	if res, err := c.Call(ctx, "say", nil); err != nil || res.IsError || res.Content[0].Text != "echo" {
		t.Errorf("say: %+v %v", res, err)
	}
	for tool, rule := range map[string]string{"who": "not who on the support view", "a__secret": "the default (deny)"} {
		_, err := c.Call(ctx, tool, nil)
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("%s: %v, want a refusal by %s", tool, err, rule)
		}
	}
}
