package access_test

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/gateway/audit"
	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

type msg struct {
	Message string `json:"message"`
}

// upstream serves a server named name over Streamable HTTP with the
// tools read, write and delete, a prompt and two resources.
func upstream(t *testing.T, name string) *config.Server {
	s := server.New(protocol.Implementation{Name: name, Version: "1"}, nil)
	for _, tool := range []string{"read", "write", "delete"} {
		server.AddTool(s, &protocol.Tool{Name: tool}, func(ctx context.Context, req *server.Request, in msg) (string, error) {
			return tool + ":" + in.Message, nil
		})
	}
	s.AddPrompt(&protocol.Prompt{Name: "greet"}, func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("hi")}}}, nil
	})
	for _, uri := range []string{"doc://" + name + "/public/a", "doc://" + name + "/secret/b"} {
		s.AddResource(&protocol.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "x"}}}, nil
		})
	}
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL}
}

// headerAuth names the caller of a request by its X-Caller header and
// its roles and scopes by X-Roles and X-Scopes: a test's stand-in for the
// token checks, which the interop tests make with a real provider.
func headerAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &intercept.Caller{ID: r.Header.Get("X-Caller"), Subject: r.Header.Get("X-Caller"),
			Roles: strings.Fields(r.Header.Get("X-Roles")), Scopes: strings.Fields(r.Header.Get("X-Scopes"))}
		next.ServeHTTP(w, r.WithContext(intercept.WithCaller(r.Context(), c)))
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) records(t *testing.T) []audit.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []audit.Record
	for _, line := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

var rules = &config.Access{Rules: []config.AccessRule{
	{Description: "admins", Allow: &config.Condition{Roles: []string{"admin"}}, Tools: []string{"*"}, Prompts: []string{"*"}, Resources: []string{"*"}},
	{Description: "everyone reads", Allow: &config.Condition{}, Tools: []string{"*__read"}, Resources: []string{"doc://*/public/*"}},
	{Description: "writers", Allow: &config.Condition{Roles: []string{"writer"}, Scopes: []string{"files:write"}}, Tools: []string{"a__write"}},
	{Description: "nobody deletes", Deny: &config.Condition{}, Tools: []string{"*__delete"}},
}}

func startGateway(t *testing.T, live *access.Live, log *audit.Log) string {
	t.Helper()
	views, err := view.New([]*config.View{{Name: "ops", Tools: []config.ViewItem{
		{From: "a__read", Name: "lookup"}, {From: "b__read"}, {From: "a__write", Name: "save"}}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New([]*config.Server{upstream(t, "a"), upstream(t, "b")}, &gateway.Options{
		Auth:       headerAuth,
		Middleware: []intercept.Middleware{log.Middleware(nil), live.Middleware()},
		Views:      views,
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return ts.URL
}

func connect(t testing.TB, url, version, caller, roles, scopes string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{"X-Caller": {caller}, "X-Roles": {roles}, "X-Scopes": {scopes}}
	c, err := client.Connect(ctx, &streamable.Transport{URL: url, Header: h}, &client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	tools, err := client.Collect(c.Tools(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range tools {
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

// The rules hold on /mcp and on /servers/NAME/mcp alike, in both eras:
// lists show what the caller may use, refused calls name their rule,
// every call is audited.
func TestMiddlewareOnTheGateway(t *testing.T) {
	var buf syncBuffer
	live := access.NewLive(nil)
	p, err := access.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	live.Set(p)
	url := startGateway(t, live, audit.NewLog(&buf, false))
	for _, version := range []string{protocol.LatestLegacyVersion, protocol.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			admin := connect(t, url+"/mcp", version, "root", "admin", "")
			guest := connect(t, url+"/mcp", version, "guest", "", "")
			writer := connect(t, url+"/servers/a/mcp", version, "wanda", "writer", "")
			if got, want := toolNames(t, admin), []string{"a__read", "a__write", "b__read", "b__write"}; !slices.Equal(got, want) {
				t.Errorf("admin's tools %v, want %v", got, want)
			}
			if got, want := toolNames(t, guest), []string{"a__read", "b__read"}; !slices.Equal(got, want) {
				t.Errorf("guest's tools %v, want %v", got, want)
			}
			if got, want := toolNames(t, writer), []string{"read"}; !slices.Equal(got, want) {
				t.Errorf("writer's tools on /servers/a/mcp %v, want %v", got, want)
			}
			res, err := admin.Call(ctx, "a__read", msg{"m"})
			if err != nil || res.IsError {
				t.Fatalf("admin read: %v %+v", err, res)
			}
			_, err = admin.Call(ctx, "b__delete", msg{"m"})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpc.Message, `access rule 3 (nobody deletes) refuses tools/call of "b__delete"`) {
				t.Fatalf("admin delete: %v", err)
			}
			_, err = writer.Call(ctx, "write", msg{"m"})
			if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "insufficient_scope") || !strings.Contains(string(rpc.Data), `"scope":"files:write"`) {
				t.Fatalf("writer without the scope: %v", err)
			}
			if _, err := guest.GetPrompt(ctx, "a__greet", nil); err == nil {
				t.Fatal("guest got a prompt no rule allows")
			}
			complete := &protocol.CompleteParams{Ref: protocol.CompleteRef{Type: protocol.RefPrompt, Name: "a__greet"}, Argument: protocol.CompleteArgument{Name: "who", Value: "a"}}
			if _, err := guest.Complete(ctx, complete); !errors.As(err, &rpc) || !strings.Contains(rpc.Message, `refuses completion/complete of "a__greet"`) {
				t.Fatalf("guest completed a prompt no rule allows: %v", err)
			}
			if _, err := admin.Complete(ctx, complete); errors.As(err, &rpc) && strings.Contains(rpc.Message, "refuses") {
				t.Fatalf("admin's completion: %v", err)
			}
			resources, err := client.Collect(guest.Resources(ctx))
			if err != nil || len(resources) != 2 || strings.Contains(resources[0].URI+resources[1].URI, "secret") {
				t.Fatalf("guest's resources %+v %v", resources, err)
			}
			if _, err := guest.ReadResource(ctx, "doc://a/secret/b"); err == nil {
				t.Fatal("guest read a secret resource")
			}
			if _, err := guest.Subscribe(ctx, "doc://a/secret/b"); !errors.As(err, &rpc) || !strings.Contains(rpc.Message, `of "doc://a/secret/b"`) {
				t.Fatalf("guest subscribed to a secret resource: %v", err)
			}
			unsubscribe, err := guest.Subscribe(ctx, "doc://a/public/a")
			if err != nil {
				t.Fatalf("guest's subscription to a public resource: %v", err)
			}
			unsubscribe(ctx)
		})
	}
	recs := buf.records(t)
	var outcomes []string
	for _, r := range recs {
		outcomes = append(outcomes, r.Caller+" "+r.Method+" "+r.Server+" "+r.Name+" "+r.Outcome+" "+r.RefusedBy)
		if r.ArgumentsSHA256 == "" && r.Method == protocol.MethodToolsCall || r.Arguments != nil {
			t.Errorf("record %+v: a digest of the arguments and never them", r)
		}
	}
	want := []string{
		"root tools/call a a__read ok ",
		"root tools/call b b__delete refused rule 3",
		"wanda tools/call a write refused default",
		"guest prompts/get a a__greet refused default",
		"guest resources/read a doc://a/secret/b refused default",
	}
	want = append(want, want...) // both eras
	if !slices.Equal(outcomes, want) {
		t.Errorf("audit records:\n%s\nwant:\n%s", strings.Join(outcomes, "\n"), strings.Join(want, "\n"))
	}
}

// A policy set while clients are connected holds for their next
// requests: the reload swaps it whole.
func TestLiveSwap(t *testing.T) {
	var buf syncBuffer
	live := access.NewLive(nil)
	url := startGateway(t, live, audit.NewLog(&buf, true))
	guest := connect(t, url+"/mcp", protocol.LatestLegacyVersion, "guest", "", "")
	if n := len(toolNames(t, guest)); n != 6 {
		t.Fatalf("without rules the guest sees %d tools, want 6", n)
	}
	p, err := access.Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	live.Set(p)
	if got := toolNames(t, guest); !slices.Equal(got, []string{"a__read", "b__read"}) {
		t.Fatalf("after the swap the guest sees %v", got)
	}
	if _, err := guest.Call(context.Background(), "a__read", map[string]any{"z": 1, "a": "x"}); err != nil {
		t.Fatal(err)
	}
	recs := buf.records(t)
	if len(recs) != 1 || string(recs[0].Arguments) != `{"a":"x","z":1}` {
		t.Fatalf("records %+v: want the canonical arguments when asked for", recs)
	}
}

// Through a view, a tool is decided by its server's name (SERVER__TOOL)
// and by its name in the view (VIEW:NAME), and audited with both.
func TestMiddlewareOnAView(t *testing.T) {
	var buf syncBuffer
	p, err := access.Compile(&config.Access{Rules: []config.AccessRule{
		{Description: "support reads", Allow: &config.Condition{Roles: []string{"support"}}, Tools: []string{"*__read"}},
		{Description: "ops saves", Allow: &config.Condition{Roles: []string{"ops"}}, Tools: []string{"ops:save"}},
		{Description: "not b through ops", Deny: &config.Condition{}, Tools: []string{"b__*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url := startGateway(t, access.NewLive(p), audit.NewLog(&buf, false))
	ctx := context.Background()
	support := connect(t, url+"/views/ops/mcp", protocol.Version20260728, "sam", "support", "")
	ops := connect(t, url+"/views/ops/mcp", protocol.LatestLegacyVersion, "olga", "ops", "")
	if got := toolNames(t, support); !slices.Equal(got, []string{"lookup"}) {
		t.Errorf("support sees %v in the view, want lookup (a__read; b__read denied)", got)
	}
	if got := toolNames(t, ops); !slices.Equal(got, []string{"save"}) {
		t.Errorf("ops sees %v in the view, want save", got)
	}
	if _, err := ops.Call(ctx, "save", msg{"m"}); err != nil {
		t.Fatalf("ops save: %v", err)
	}
	_, err = support.Call(ctx, "b__read", msg{"m"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "access rule 2 (not b through ops)") {
		t.Fatalf("support's b__read through the view: %v", err)
	}
	recs := buf.records(t)
	if len(recs) != 2 || recs[0].View != "ops" || recs[0].Server != "a" || recs[0].Name != "save" || recs[0].Tool != "write" || recs[0].Outcome != "ok" ||
		recs[1].Outcome != "refused" || recs[1].Server != "b" {
		t.Fatalf("records %+v", recs)
	}
}
