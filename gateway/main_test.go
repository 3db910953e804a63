package gateway

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// The test binary is also the upstream server of the tests: run with
// FERRY_GATEWAY_TEST_SERVER set, it serves testServer over stdio, so
// that the tests run real child processes without building anything.
func TestMain(m *testing.M) {
	if name := os.Getenv("FERRY_GATEWAY_TEST_SERVER"); name != "" {
		os.Exit(runTestServer(name))
	}
	os.Exit(m.Run())
}

type messageIn struct {
	Message string `json:"message"`
}

type sleepIn struct {
	Ms int `json:"ms"`
}

type askIn struct {
	Prompt string `json:"prompt"`
}

// runTestServer serves testServer(name) on stdio, its requests traced to
// OTLP when OTEL_EXPORTER_OTLP_ENDPOINT says where.
func runTestServer(name string) int {
	ctx := context.Background()
	tp, stop, err := observe.TracerProviderFromEnv(ctx, name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mw []intercept.Middleware
	if tp != nil {
		obs, err := observe.New(&observe.Options{TracerProvider: tp})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mw = append(mw, obs.Middleware(name))
	}
	err = testServer(name, mw...).Run(ctx, stdio.ServerStream())
	stop(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testServer is the upstream server of the tests, named name.
func testServer(name string, mw ...intercept.Middleware) *server.Server {
	s := server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, &server.Options{Receiving: mw})
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes the message."},
		func(ctx context.Context, req *server.Request, in messageIn) (string, error) { return in.Message, nil })
	server.AddTool(s, &protocol.Tool{Name: "whoami", Description: "The server's name and process id."},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return name + " " + strconv.Itoa(os.Getpid()), nil
		})
	var cancelled atomic.Int32
	server.AddTool(s, &protocol.Tool{Name: "sleep", Description: "Sleeps; cancelled says how many sleeps were cancelled."},
		func(ctx context.Context, req *server.Request, in sleepIn) (string, error) {
			if in.Ms < 0 {
				return strconv.Itoa(int(cancelled.Load())), nil
			}
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return "slept", nil
			case <-ctx.Done():
				cancelled.Add(1)
				return "", ctx.Err()
			}
		})
	server.AddTool(s, &protocol.Tool{Name: "sample", Description: "Asks the client's model."},
		func(ctx context.Context, req *server.Request, in askIn) (string, error) {
			res, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{
				Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent(in.Prompt)}}},
				MaxTokens: 10,
			})
			if err != nil {
				return "", err
			}
			if len(res.Content) == 0 {
				return "sampled nothing", nil
			}
			return "sampled: " + res.Content[0].Text, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "progress", Description: "Reports progress, then logs."},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				req.Progress(ctx, float64(i), 3, "step")
			}
			req.Log(ctx, protocol.LevelInfo, "test", "info message")
			req.Log(ctx, protocol.LevelError, "test", "error message")
			return "done", nil
		})
	var version atomic.Int32
	s.AddResource(&protocol.Resource{URI: "test://" + name + "/version", Name: "version"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: strconv.Itoa(int(version.Load()))}}}, nil
		})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://" + name + "/items/{id}", Name: "item"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "item " + req.URIVars["id"]}}}, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "bump", Description: "Changes the version resource."},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			version.Add(1)
			s.ResourceUpdated(context.Background(), "test://"+name+"/version")
			return "bumped", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "grow", Description: "Adds a tool."},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			server.AddTool(s, &protocol.Tool{Name: "grown"},
				func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "grown", nil })
			return "grew", nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "greet", Arguments: []protocol.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("hello " + args["who"])}}}, nil
		})
	s.SetCompleter(protocol.RefPrompt, "greet", func(ctx context.Context, req *server.Request, arg, value string, resolved map[string]string) ([]string, error) {
		return []string{value + "-" + name}, nil
	})
	return s
}
