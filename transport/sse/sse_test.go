package sse_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/ssehandler"
)

// blocked reports the end of the "block" tool's handler, with why.
type blocked struct {
	started chan struct{}
	ended   chan error
}

func testServer(b *blocked) *server.Server {
	s := server.New(protocol.Implementation{Name: "sse-test", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "count"}, func(ctx context.Context, req *server.Request, in struct {
		N int `json:"n"`
	}) (string, error) {
		for i := 1; i <= in.N; i++ {
			req.Progress(ctx, float64(i), float64(in.N), fmt.Sprint("step ", i))
		}
		return fmt.Sprint("counted ", in.N), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "sample"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		msg, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{MaxTokens: 10,
			Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent("hi")}}}})
		if err != nil {
			return "", err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s, %d roots", msg.Content[0].Text, len(roots.Roots)), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "big"}, func(ctx context.Context, req *server.Request, in struct {
		Bytes int `json:"bytes"`
	}) (string, error) {
		return strings.Repeat("x", in.Bytes), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "spam"}, func(ctx context.Context, req *server.Request, in struct {
		N     int `json:"n"`
		Bytes int `json:"bytes"`
	}) (string, error) {
		for range in.N {
			if err := req.Log(ctx, protocol.LevelError, "spam", strings.Repeat("y", in.Bytes)); err != nil {
				return "", err
			}
		}
		return "spammed", nil
	})
	server.AddTool(s, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		if b != nil {
			close(b.started)
		}
		<-ctx.Done()
		if b != nil {
			b.ended <- context.Cause(ctx)
		}
		return "", context.Cause(ctx)
	})
	s.AddResource(&protocol.Resource{URI: "test://r", Name: "r", MIMEType: "text/plain"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "R"}}}, nil
	})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://t/{x}", Name: "t"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "T" + req.URIVars["x"]}}}, nil
	})
	s.AddPrompt(&protocol.Prompt{Name: "p", Arguments: []protocol.PromptArgument{{Name: "a", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("P" + args["a"])}}}, nil
		})
	return s
}

// serve starts an HTTP server with an ssehandler.Handler for s. Cleanups close
// the handler and the server.
func serve(t *testing.T, s *server.Server, opts *ssehandler.Options) (*httptest.Server, *ssehandler.Handler) {
	t.Helper()
	h := ssehandler.New(s, opts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return ts, h
}

func clientOptions(version string) *client.Options {
	return &client.Options{
		ProtocolVersion: version,
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "m", Content: protocol.SamplingContent{protocol.TextContent("sampled")}}, nil
		},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			return []protocol.Root{{URI: "file:///a"}, {URI: "file:///b"}}, nil
		},
	}
}

func connect(t *testing.T, url string, httpClient *http.Client, opts *client.Options) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &sse.Transport{URL: url, Client: httpClient}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestClientServer runs a ferry client over sse.Transport against a ferry
// server over ssehandler.Handler, through every kind of request.
func TestClientServer(t *testing.T) {
	leakcheck.Check(t)
	ts, h := serve(t, testServer(nil), nil)
	var mu sync.Mutex
	var logs []string
	opts := clientOptions(protocol.Version20241105)
	opts.LogLevel = protocol.LevelError
	opts.OnLog = func(p *protocol.LoggingMessageParams) {
		mu.Lock()
		logs = append(logs, fmt.Sprint(p.Data))
		mu.Unlock()
	}
	c := connect(t, ts.URL+"/sse", ts.Client(), opts)
	if c.ProtocolVersion() != protocol.Version20241105 || c.ServerInfo().Name != "sse-test" {
		t.Fatalf("connected with %s to %+v", c.ProtocolVersion(), c.ServerInfo())
	}
	if n := h.Sessions(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"tools/list", func() (string, error) {
			tools, err := client.Collect(c.Tools(ctx))
			names := make([]string, len(tools))
			for i, tool := range tools {
				names[i] = tool.Name
			}
			return strings.Join(names, ","), err
		}, "big,block,count,echo,sample,spam"},
		{"tools/call", func() (string, error) {
			res, err := c.Call(ctx, "echo", map[string]any{"message": "héllo\nworld"})
			if err != nil {
				return "", err
			}
			return res.Content[0].Text, nil
		}, "héllo\nworld"},
		{"progress", func() (string, error) {
			var mu sync.Mutex
			var seen []string
			pctx := client.WithProgress(ctx, func(p *protocol.ProgressParams) {
				mu.Lock()
				seen = append(seen, fmt.Sprint(p.Progress, "/", p.Total))
				mu.Unlock()
			})
			res, err := c.Call(pctx, "count", map[string]any{"n": 3})
			if err != nil {
				return "", err
			}
			mu.Lock()
			defer mu.Unlock()
			return res.Content[0].Text + " " + strings.Join(seen, " "), nil
		}, "counted 3 1/3 2/3 3/3"},
		{"sampling and roots", func() (string, error) {
			res, err := c.Call(ctx, "sample", nil)
			if err != nil {
				return "", err
			}
			return res.Content[0].Text, nil
		}, "sampled, 2 roots"},
		{"large result", func() (string, error) {
			res, err := c.Call(ctx, "big", map[string]any{"bytes": 1 << 20})
			if err != nil {
				return "", err
			}
			return fmt.Sprint(len(res.Content[0].Text)), nil
		}, fmt.Sprint(1 << 20)},
		{"logging", func() (string, error) {
			if _, err := c.Call(ctx, "spam", map[string]any{"n": 2, "bytes": 3}); err != nil {
				return "", err
			}
			mu.Lock()
			defer mu.Unlock()
			return strings.Join(logs, ","), nil
		}, "yyy,yyy"},
		{"resources", func() (string, error) {
			list, err := client.Collect(c.Resources(ctx))
			if err != nil {
				return "", err
			}
			r, err := c.ReadResource(ctx, "test://r")
			if err != nil {
				return "", err
			}
			tr, err := c.ReadResource(ctx, "test://t/7")
			if err != nil {
				return "", err
			}
			return fmt.Sprint(len(list), " ", r.Contents[0].Text, " ", tr.Contents[0].Text), nil
		}, "1 R T7"},
		{"prompts", func() (string, error) {
			list, err := client.Collect(c.Prompts(ctx))
			if err != nil {
				return "", err
			}
			p, err := c.GetPrompt(ctx, "p", map[string]string{"a": "x"})
			if err != nil {
				return "", err
			}
			return fmt.Sprint(len(list), " ", p.Messages[0].Content.Text), nil
		}, "1 Px"},
		{"cancellation", func() (string, error) {
			cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := c.Call(cctx, "block", nil)
			return fmt.Sprint(errors.Is(err, context.DeadlineExceeded)), nil
		}, "true"},
		{"ping", func() (string, error) { return "pong", c.Ping(ctx) }, "pong"},
		{"concurrent calls", func() (string, error) {
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for i := range 20 {
				wg.Go(func() {
					res, err := c.Call(ctx, "echo", map[string]any{"message": fmt.Sprint(i)})
					if err == nil && res.Content[0].Text != fmt.Sprint(i) {
						err = fmt.Errorf("call %d answered %q", i, res.Content[0].Text)
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					return "", err
				}
			}
			return "ok", nil
		}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				if len(got) > 200 {
					got = got[:200] + "…"
				}
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	c.Close()
	waitFor(t, "the session to end", func() bool { return h.Sessions() == 0 })
}

// TestEras connects with each legacy revision, and with detection (which
// probes with server/discover first).
func TestEras(t *testing.T) {
	for _, version := range []string{"", protocol.Version20241105, protocol.Version20250326, protocol.Version20250618, protocol.Version20251125} {
		name := version
		if name == "" {
			name = "detect"
		}
		t.Run(name, func(t *testing.T) {
			leakcheck.Check(t)
			ts, _ := serve(t, testServer(nil), nil)
			c := connect(t, ts.URL+"/sse", ts.Client(), clientOptions(version))
			if version != "" && c.ProtocolVersion() != version {
				t.Errorf("version %s, want %s", c.ProtocolVersion(), version)
			}
			res, err := c.Call(context.Background(), "sample", nil)
			if err != nil || res.Content[0].Text != "sampled, 2 roots" {
				t.Fatalf("sample: %+v %v", res, err)
			}
			t.Logf("negotiated %s (stateless: %v)", c.ProtocolVersion(), c.Stateless())
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
