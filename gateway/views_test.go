package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// viewSet compiles the "views" of a configuration file.
func viewSet(t testing.TB, views string) *view.Set {
	t.Helper()
	f, err := config.Parse("ferry.json", []byte(`{"mcpServers": {}, "views": `+views+`}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := config.ReadViews([]*config.File{f}, config.Vars{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := view.New(cv)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

const supportView = `{"support": {
	"tools": {
		"a__echo": {"name": "say", "description": "Says the team's motto.", "fixed": {"message": "we fix it"}},
		"b__whoami": {}
	},
	"prompts": {"a__greet": {"name": "hello", "fixed": {"who": "team"}}},
	"resources": {"test://a/version": {"description": "A's version"}, "test://b/items/{id}": {}}
}}`

// invalidParams checks that err is a -32602 whose message names what.
func invalidParams(t *testing.T, err error, what string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, what) {
		t.Errorf("error %v, want -32602 naming %s", err, what)
	}
}

// A view shows what it names, as it names it, and sets its fixed
// arguments, in both eras.
func TestViewEndpoint(t *testing.T) {
	a, _ := remote(t, "a", false)
	b, _ := remote(t, "b", true)
	_, url := start(t, []*config.Server{a, b}, &Options{Views: viewSet(t, supportView)})
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, url+"/views/support/mcp", era.version, nil)
			tools, err := client.Collect(c.Tools(ctx))
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 2 || tools[0].Name != "say" || tools[1].Name != "b__whoami" {
				t.Fatalf("tools %+v", tools)
			}
			say := tools[0]
			var schema struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			}
			if err := json.Unmarshal(say.InputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			if say.Description != "Says the team's motto." || schema.Properties["message"] != nil || slices.Contains(schema.Required, "message") {
				t.Errorf("say shows %s: %s", say.Description, say.InputSchema)
			}
			if got := text(t)(c.Call(ctx, "say", nil)); got != "we fix it" {
				t.Errorf("say = %q", got)
			}
			_, err = c.Call(ctx, "say", map[string]string{"message": "anything"})
			invalidParams(t, err, `"message"`)
			if got := text(t)(c.Call(ctx, "b__whoami", nil)); !strings.HasPrefix(got, "b ") {
				t.Errorf("b__whoami = %q", got)
			}
			for _, hidden := range []string{"a__echo", "b__echo", "echo"} {
				_, err := c.Call(ctx, hidden, map[string]string{"message": "x"})
				invalidParams(t, err, hidden)
			}

			prompts, err := client.Collect(c.Prompts(ctx))
			if err != nil || len(prompts) != 1 || prompts[0].Name != "hello" || len(prompts[0].Arguments) != 0 {
				t.Errorf("prompts %+v %v", prompts, err)
			}
			p, err := c.GetPrompt(ctx, "hello", nil)
			if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.Text != "hello team" {
				t.Errorf("hello: %+v %v", p, err)
			}
			_, err = c.GetPrompt(ctx, "hello", map[string]string{"who": "me"})
			invalidParams(t, err, `"who"`)

			resources, err := client.Collect(c.Resources(ctx))
			if err != nil || len(resources) != 1 || resources[0].URI != "test://a/version" || resources[0].Description != "A's version" {
				t.Errorf("resources %+v %v", resources, err)
			}
			templates, err := client.Collect(c.ResourceTemplates(ctx))
			if err != nil || len(templates) != 1 || templates[0].URITemplate != "test://b/items/{id}" {
				t.Errorf("templates %+v %v", templates, err)
			}
			r, err := c.ReadResource(ctx, "test://b/items/7")
			if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "item 7" {
				t.Errorf("read test://b/items/7: %+v %v", r, err)
			}
			for _, hidden := range []string{"test://b/version", "test://a/items/1"} {
				if _, err := c.ReadResource(ctx, hidden); err == nil || !strings.Contains(err.Error(), hidden) {
					t.Errorf("read %s: %v", hidden, err)
				}
			}
		})
	}
	t.Run("sse", func(t *testing.T) {
		ctx := ctxT(t)
		c, err := client.Connect(ctx, &sse.Transport{URL: url + "/views/support/sse"}, &client.Options{ProtocolVersion: protocol.Version20241105})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := text(t)(c.Call(ctx, "say", nil)); got != "we fix it" {
			t.Errorf("say over sse = %q", got)
		}
	})
	if code, _ := httpGet(url + "/views/nope/mcp"); code != http.StatusNotFound {
		t.Errorf("an unknown view: %d", code)
	}
}

// A view's lists change when its servers' do, and when the views are
// swapped (a configuration read again): its sessions stay.
func TestViewListChanges(t *testing.T) {
	a, _ := remote(t, "a", false)
	g, url := start(t, []*config.Server{a}, &Options{Views: viewSet(t, `{"v": {"tools": {"a__echo": {"name": "say"}}}}`)})
	ctx := ctxT(t)
	changed := make(chan string, 10)
	c := connect(t, url+"/views/v/mcp", protocol.LatestLegacyVersion, &client.Options{OnListChanged: func(m string) { changed <- m }})
	wait := func(what string) {
		t.Helper()
		for {
			select {
			case m := <-changed:
				if m == protocol.NotificationToolsListChanged {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no tools list change after %s", what)
			}
		}
	}
	agg := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	text(t)(agg.Call(ctx, "a__grow", nil))
	wait("a server's change")

	g.SetViews(viewSet(t, `{"v": {"tools": {"a__echo": {"name": "shout"}, "a__grown": {}}}}`))
	wait("the views' swap")
	tools, err := client.Collect(c.Tools(ctx))
	if err != nil || len(tools) != 2 || tools[0].Name != "shout" || tools[1].Name != "a__grown" {
		t.Fatalf("tools after the swap: %+v %v", tools, err)
	}
	if got := text(t)(c.Call(ctx, "shout", map[string]string{"message": "same session"})); got != "same session" {
		t.Errorf("shout = %q", got)
	}
	if _, err := c.Call(ctx, "say", map[string]string{"message": "x"}); err == nil {
		t.Error("the old name still works")
	}

	g.SetViews(nil)
	if code, _ := httpGet(url + "/views/v/mcp"); code != http.StatusNotFound {
		t.Errorf("a view gone: %d", code)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	g.SetViews(viewSet(t, `{"v": {}}`))
	if fronts := g.viewFrontList(); len(fronts) != 0 {
		t.Errorf("a closed gateway serves %d views again", len(fronts))
	}
}

// Middleware sees a view's request under the view's names, and resolves
// them to the server and its own names as on /mcp (access rules, limits
// and audit records decide on those).
func TestViewEndpointOf(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
			if ep := EndpointOf(ctx); ep != nil && (ir.Method == protocol.MethodToolsCall || ir.Method == protocol.MethodPromptsGet) {
				server, name, ok := ep.Resolver(ctx, ir, ir.Method)(ir.Name())
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s %s: %s %s %v", ep.View, ir.Name(), server, name, ok))
				mu.Unlock()
			}
			return next(ctx, ir)
		}
	}
	a, _ := remote(t, "a", false)
	b, _ := remote(t, "b", true)
	_, url := start(t, []*config.Server{a, b}, &Options{Views: viewSet(t, supportView), Middleware: []intercept.Middleware{record}})
	ctx := ctxT(t)
	c := connect(t, url+"/views/support/mcp", protocol.Version20260728, nil)
	text(t)(c.Call(ctx, "say", nil))
	text(t)(c.Call(ctx, "b__whoami", nil))
	c.GetPrompt(ctx, "hello", nil)
	c.Call(ctx, "a__echo", nil)
	agg := connect(t, url+"/mcp", protocol.Version20260728, nil)
	text(t)(agg.Call(ctx, "a__echo", map[string]string{"message": "m"}))
	want := []string{"support say: a echo true", "support b__whoami: b whoami true", "support hello: a greet true",
		"support a__echo:   false", " a__echo: a echo true"}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Errorf("seen\n %q\nwant\n %q", seen, want)
	}
}

// A view's legacy session opened on one replica is served by every
// replica, as /mcp's are.
func TestViewSessionServedByEveryReplica(t *testing.T) {
	up, _ := remote(t, "r", false)
	b, _, url := replicas(t, 2, func() []*config.Server { return []*config.Server{up} }, func() *Options {
		return &Options{Views: viewSet(t, `{"v": {"tools": {"r__echo": {"name": "say", "fixed": {"message": "fixed"}}}}}`)}
	})
	c := connect(t, url+"/views/v/mcp", protocol.LatestLegacyVersion, nil)
	ctx := ctxT(t)
	for i := range 4 {
		if got := text(t)(c.Call(ctx, "say", nil)); got != "fixed" {
			t.Fatalf("call %d: %q", i, got)
		}
	}
	if n := b.inits.Load(); n != 1 {
		t.Errorf("the client sent initialize %d times, want 1", n)
	}
}

// A view's session stays its caller's however many sessions open after
// it: the gateway forgets the callers of sessions that ended only.
func TestViewSessionBoundToCaller(t *testing.T) {
	up, _ := remote(t, "r", false)
	_, url := start(t, []*config.Server{up}, &Options{Auth: BearerTokens([]string{"alice-token", "bob-token"}),
		Views: viewSet(t, `{"v": {"tools": {"r__echo": {}}}}`)})
	do := func(token, session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url+"/views/v/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", protocol.LatestLegacyVersion)
		}
		resp, err := http.DefaultClient.Do(req.WithContext(ctxT(t)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` +
		protocol.LatestLegacyVersion + `","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	_, alices := do("alice-token", "", initialize)
	// Enough sessions after it that the gateway prunes the callers of
	// those it does not know to be open.
	for range 70 {
		if code, sess := do("bob-token", "", initialize); code != 200 || sess == "" {
			t.Fatalf("initialize: %d %q", code, sess)
		}
	}
	if code, _ := do("bob-token", alices, ping); code != http.StatusNotFound {
		t.Errorf("alice's view session with bob's token: %d, want 404", code)
	}
	if code, _ := do("alice-token", alices, ping); code != 200 {
		t.Errorf("alice's own view session: %d", code)
	}
}

// A server's log messages reach the clients of the views that show it,
// not those of a view that curates it out.
func TestViewLogsOfItsServersOnly(t *testing.T) {
	speaker := func(name string) *config.Server {
		s := server.New(protocol.Implementation{Name: name, Version: "1"}, nil)
		server.AddTool(s, &protocol.Tool{Name: "speak"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			req.Log(ctx, protocol.LevelInfo, name, name+" speaks")
			return "spoke", nil
		})
		h := streamablehandler.New(s, nil)
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
		return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL}
	}
	_, url := start(t, []*config.Server{speaker("a"), speaker("b")}, &Options{Views: viewSet(t, `{"v": {"tools": {"b__speak": {}}}}`)})
	ctx := ctxT(t)
	logs := func() (*client.Options, chan string) {
		ch := make(chan string, 10)
		return &client.Options{LogLevel: protocol.LevelDebug, OnLog: func(p *protocol.LoggingMessageParams) { ch <- p.Logger }}, ch
	}
	aggOpts, aggLogs := logs()
	viewOpts, viewLogs := logs()
	agg := connect(t, url+"/mcp", protocol.LatestLegacyVersion, aggOpts)
	v := connect(t, url+"/views/v/mcp", protocol.LatestLegacyVersion, viewOpts)
	if _, err := client.Collect(v.Tools(ctx)); err != nil {
		t.Fatal(err)
	}
	next := func(ch chan string, who string) string {
		t.Helper()
		select {
		case l := <-ch:
			return l
		case <-ctx.Done():
			t.Fatalf("no log reached the %s client", who)
			return ""
		}
	}
	text(t)(agg.Call(ctx, "a__speak", nil))
	if l := next(aggLogs, "/mcp"); l != "a" {
		t.Fatalf("/mcp got %s's log", l)
	}
	text(t)(v.Call(ctx, "b__speak", nil))
	if l := next(viewLogs, "view"); l != "b" {
		t.Errorf("the view's client got %s's log, want b's only", l)
	}
}

// A view naming a tool no server has (a name misspelt) says so in the
// log, once.
func TestViewWarnsOfMissingItems(t *testing.T) {
	a, _ := remote(t, "a", false)
	var log bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(p)
	}), nil))
	_, url := start(t, []*config.Server{a}, &Options{Logger: logger,
		Views: viewSet(t, `{"v": {"tools": {"a__echo": {}, "a__ecoh": {}}, "prompts": {"a__greet": {}}}}`)})
	ctx := ctxT(t)
	for _, era := range eras {
		c := connect(t, url+"/views/v/mcp", era.version, nil)
		tools, err := client.Collect(c.Tools(ctx))
		if err != nil || len(tools) != 1 || tools[0].Name != "a__echo" {
			t.Fatalf("tools %+v %v", tools, err)
		}
		if _, err := client.Collect(c.Prompts(ctx)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(log.String(), `msg="gateway: a view names tools no server offers (as /mcp names them)" view=v tools=[a__ecoh]`); n != 1 {
		t.Errorf("%d warnings of a__ecoh, want 1:\n%s", n, log.String())
	}
	if strings.Contains(log.String(), "prompts no server") {
		t.Errorf("a warning of prompts, which are all there:\n%s", log.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A completion of a view's prompt gets the view's fixed arguments as its
// context, on which another argument's values may depend; completing a
// fixed argument is refused.
func TestViewPromptCompletion(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "teams", Version: "1"}, nil)
	s.AddPrompt(&protocol.Prompt{Name: "lead", Arguments: []protocol.PromptArgument{{Name: "team"}, {Name: "member"}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent(args["member"] + " leads " + args["team"])}}}, nil
		})
	s.SetCompleter(protocol.RefPrompt, "lead", func(ctx context.Context, req *server.Request, arg, value string, resolved map[string]string) ([]string, error) {
		if arg == "member" && resolved["team"] == "support" {
			return []string{"John", "Kim"}, nil
		}
		return []string{}, nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	_, url := start(t, []*config.Server{{Name: "t", Transport: config.HTTP, URL: ts.URL}},
		&Options{Views: viewSet(t, `{"v": {"prompts": {"t__lead": {"name": "lead", "fixed": {"team": "support"}}}}}`)})
	ctx := ctxT(t)
	for _, era := range eras {
		c := connect(t, url+"/views/v/mcp", era.version, nil)
		complete := func(arg string) (*protocol.CompleteResult, error) {
			return c.Complete(ctx, &protocol.CompleteParams{Ref: protocol.CompleteRef{Type: protocol.RefPrompt, Name: "lead"},
				Argument: protocol.CompleteArgument{Name: arg, Value: ""}})
		}
		res, err := complete("member")
		if err != nil || !slices.Equal(res.Completion.Values, []string{"John", "Kim"}) {
			t.Errorf("%s: member: %+v %v", era.name, res, err)
		}
		_, err = complete("team")
		invalidParams(t, err, `"team"`)
	}
}
