package interop

// ferry's HTTP+SSE transport against the go-sdk's (v1.8.0): its
// SSEClientTransport driving ferry's ssehandler.Handler, and ferry's
// sse.Transport against its SSEHandler, whose endpoint event is a
// query-only reference ("?sessionid=…", POSTs going to the SSE path).

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/ssehandler"
)

func TestSSEGoSDKClientFerryServer(t *testing.T) {
	h := ssehandler.New(sseFerryServer(), nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	var progress []float64
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-sse", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "go-sdk-model", Content: &mcp.TextContent{Text: "sampled by go-sdk"}}, nil
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///tmp/go-sdk-root"})
	cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: ts.URL + "/sse", HTTPClient: ts.Client()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v == "" {
		t.Error("no protocol version")
	} else {
		t.Logf("go-sdk SSEClientTransport negotiated %s with ferry's ssehandler.Handler", v)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		meta mcp.Meta
		want string
	}{
		{"echo", map[string]any{"message": "over sse\nline 2"}, nil, "over sse\nline 2"},
		{"count", map[string]any{"n": 3, "delayMs": 10}, mcp.Meta{"progressToken": "p1"}, "counted to 3"},
		{"sample", nil, nil, "sampled by go-sdk (go-sdk-model); roots: file:///tmp/go-sdk-root"},
	} {
		params := &mcp.CallToolParams{Name: tc.name, Arguments: tc.args}
		params.Meta = tc.meta
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || text != tc.want {
			t.Errorf("%s: %q (isError %v), want %q", tc.name, text, res.IsError, tc.want)
		}
	}
	mu.Lock()
	if len(progress) != 3 {
		t.Errorf("progress %v", progress)
	}
	mu.Unlock()
	cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for h.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.Sessions(); n != 0 {
		t.Errorf("%d sessions left after the client closed", n)
	}
}

func TestSSEFerryClientGoSDKServer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-sse-server", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Message}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		msg, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg.Content.(*mcp.TextContent).Text + " " + roots.Roots[0].URI}}}, nil, nil
	})
	gh := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(gh)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	for _, version := range []string{protocol.Version20241105, ""} {
		c, err := client.Connect(ctx, &sse.Transport{URL: ts.URL + "/sse", Client: ts.Client()}, &client.Options{
			ProtocolVersion: version,
			Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
				return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "ferry", Content: protocol.SamplingContent{protocol.TextContent("sampled by ferry")}}, nil
			},
			Roots: func(ctx context.Context) ([]protocol.Root, error) {
				return []protocol.Root{{URI: "file:///tmp/ferry-root"}}, nil
			},
		})
		if err != nil {
			t.Fatalf("%q: %v", version, err)
		}
		t.Logf("ferry sse.Transport (version %q) negotiated %s with the go-sdk SSEHandler", version, c.ProtocolVersion())
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"echo", map[string]any{"message": "a\nb"}, "echo: a\nb"},
			{"ask", nil, "sampled by ferry file:///tmp/ferry-root"},
		} {
			name, want := tc.name, tc.want
			res, err := c.Call(ctx, name, tc.args)
			if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, want) {
				t.Errorf("%s: %+v %v", name, res, err)
			}
		}
		c.Close()
	}
}
