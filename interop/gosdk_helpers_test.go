package interop

// Helpers of the go-sdk interop tests (gosdk_test.go): OS pipes, waiting,
// and ferry's in-process server, which mirrors examples/everything (a main
// package, so not importable) closely enough for one suite of assertions
// to hold against both.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// goSDKVersion is the go-sdk release these tests pin (interop/go.mod).
const goSDKVersion = "v1.8.0"

// gosdkPipes returns the two ends of a connection made of two os.Pipe pairs:
// what is written to clientW is read from serverR and the other way round.
// Every descriptor is closed when the test ends.
func gosdkPipes(t *testing.T) (clientR, clientW, serverR, serverW *os.File) {
	t.Helper()
	serverR, clientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	clientR, serverW, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{clientR, clientW, serverR, serverW} {
			f.Close()
		}
	})
	return clientR, clientW, serverR, serverW
}

// gosdkWaitFor polls cond until it holds, failing the test after d.
func gosdkWaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gosdkRecorder collects what a peer's callbacks saw, safely across goroutines.
type gosdkRecorder[T any] struct {
	mu    sync.Mutex
	items []T
}

func (r *gosdkRecorder[T]) add(v T) {
	r.mu.Lock()
	r.items = append(r.items, v)
	r.mu.Unlock()
}

func (r *gosdkRecorder[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.items...)
}

func (r *gosdkRecorder[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

func (r *gosdkRecorder[T]) reset() {
	r.mu.Lock()
	r.items = nil
	r.mu.Unlock()
}

// goSDKServerBinary builds interop/gosdkserver/cmd into the test's
// temporary directory.
func goSDKServerBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gosdk-everything")
	out, err := exec.Command("go", "build", "-o", bin, "./gosdkserver/cmd").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./gosdkserver/cmd: %v\n%s", err, out)
	}
	return bin
}

// ferryFixture is ferry's in-process server for the go-sdk client, and
// what its handlers saw.
type ferryFixture struct {
	srv *server.Server
	// countdownCancelled receives the cause of every countdown the
	// client cancelled.
	countdownCancelled gosdkRecorder[error]
}

// newFerryEverything builds ferry's in-process server for the go-sdk
// client: the tools, resources, template, prompts and completers of
// examples/everything, with the same names and answers.
func newFerryEverything() *ferryFixture {
	fx := &ferryFixture{}
	s := server.New(protocol.Implementation{Name: "ferry-everything", Title: "ferry: everything", Version: "0.1.0"},
		&server.Options{Instructions: "in-process mirror of examples/everything"})

	type echoIn struct {
		Message string `json:"message" description:"The text to echo back"`
	}
	type addIn struct {
		A float64 `json:"a" description:"First addend"`
		B float64 `json:"b" description:"Second addend"`
	}
	type addOut struct {
		Sum float64 `json:"sum" description:"a + b"`
	}
	type countdownIn struct {
		Steps   int `json:"steps" description:"Number of steps" jsonschema:"minimum=1,maximum=100,default=5"`
		DelayMS int `json:"delayMs,omitempty" description:"Milliseconds between steps" jsonschema:"minimum=0,maximum=10000,default=100"`
	}
	type weatherIn struct {
		City string `json:"city" description:"City name"`
		Unit string `json:"unit,omitempty" description:"Temperature unit" jsonschema:"enum=celsius|fahrenheit,default=celsius"`
	}
	type weatherOut struct {
		City        string  `json:"city"`
		Temperature float64 `json:"temperature"`
		Unit        string  `json:"unit"`
		Conditions  string  `json:"conditions"`
	}
	type summarizeIn struct {
		Text string `json:"text" description:"Text to summarize"`
	}
	type logIn struct {
		Level   string `json:"level,omitempty" jsonschema:"enum=debug|info|notice|warning|error,default=info"`
		Message string `json:"message"`
	}

	readOnly := true
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes back the message",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &readOnly}},
		func(ctx context.Context, req *server.Request, in echoIn) (string, error) { return in.Message, nil })
	server.AddTool(s, &protocol.Tool{Name: "add", Description: "Adds two numbers"},
		func(ctx context.Context, req *server.Request, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "countdown", Description: "Counts down, reporting progress at each step"},
		func(ctx context.Context, req *server.Request, in countdownIn) (string, error) {
			for i := 1; i <= in.Steps; i++ {
				req.Progress(ctx, float64(i), float64(in.Steps), fmt.Sprintf("step %d of %d", i, in.Steps))
				if i < in.Steps && in.DelayMS > 0 {
					select {
					case <-ctx.Done():
						fx.countdownCancelled.add(context.Cause(ctx))
						return "", context.Cause(ctx)
					case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
					}
				}
			}
			return fmt.Sprintf("counted down %d steps", in.Steps), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "weather", Description: "Reports the (made-up) weather of a city, as structured output"},
		func(ctx context.Context, req *server.Request, in weatherIn) (weatherOut, error) {
			unit, t := in.Unit, 21.5
			if unit == "" {
				unit = "celsius"
			}
			if unit == "fahrenheit" {
				t = t*9/5 + 32
			}
			return weatherOut{City: in.City, Temperature: t, Unit: unit, Conditions: "sunny"}, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "ask_name", Description: "Asks the user for their name (elicitation) and greets them"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`),
			})
			if err != nil {
				return "", err
			}
			if res.Action != protocol.ElicitAccept {
				return "The user did not answer (" + res.Action + ").", nil
			}
			return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "summarize", Description: "Asks the client's model to summarize a text (sampling)"},
		func(ctx context.Context, req *server.Request, in summarizeIn) (string, error) {
			res, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{
				Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser,
					Content: protocol.SamplingContent{protocol.TextContent("Summarize in one sentence:\n" + in.Text)}}},
				MaxTokens: 200,
			})
			if err != nil {
				return "", err
			}
			var parts []string
			for _, c := range res.Content {
				if c.Type == protocol.ContentText {
					parts = append(parts, c.Text)
				}
			}
			return strings.Join(parts, "\n"), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "roots", Description: "Lists the client's roots"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			res, err := req.ListRoots(ctx)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d root(s)", len(res.Roots))
			for _, r := range res.Roots {
				fmt.Fprintf(&b, "\n%s %s", r.URI, r.Name)
			}
			return b.String(), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "log", Description: "Sends a log message to the client"},
		func(ctx context.Context, req *server.Request, in logIn) (string, error) {
			level := protocol.LoggingLevel(in.Level)
			if level == "" {
				level = protocol.LevelInfo
			}
			req.Log(ctx, level, "everything", in.Message)
			return "logged", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "fail", Description: "Always fails, to show how tool errors look"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return "", fmt.Errorf("this tool always fails")
		})

	s.AddResource(&protocol.Resource{URI: "ferry://readme", Name: "readme", Title: "README", MIMEType: "text/markdown"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "text/markdown",
				Text: "# ferry everything\n\nAn example server exercising every MCP feature.\n"}}}, nil
		})
	s.AddResource(&protocol.Resource{URI: "ferry://logo.png", Name: "logo", MIMEType: "image/png"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "image/png", Blob: png}}}, nil
		})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "ferry://greeting/{name}", Name: "greeting", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "text/plain",
				Text: "Hello, " + req.URIVars["name"] + "!"}}}, nil
		})
	s.SetCompleter(protocol.RefResource, "ferry://greeting/{name}",
		func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
			return gosdkPrefixed([]string{"alice", "bob", "carol", "dave"}, value), nil
		})

	s.AddPrompt(&protocol.Prompt{Name: "simple", Description: "A prompt without arguments"},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser,
				Content: protocol.TextContent("Tell me something interesting.")}}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "review", Description: "Asks for a code review",
		Arguments: []protocol.PromptArgument{
			{Name: "language", Description: "Programming language", Required: true},
			{Name: "style", Description: "Review style (brief or thorough)"},
		}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			style := args["style"]
			if style == "" {
				style = "brief"
			}
			return &protocol.GetPromptResult{Description: "Code review",
				Messages: []protocol.PromptMessage{
					{Role: protocol.RoleUser, Content: protocol.TextContent(fmt.Sprintf("Please give a %s review of my %s code.", style, args["language"]))},
					{Role: protocol.RoleUser, Content: protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "ferry://readme", MIMEType: "text/markdown", Text: "# ferry everything"})},
				}}, nil
		})
	s.SetCompleter(protocol.RefPrompt, "review",
		func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
			switch arg {
			case "language":
				return gosdkPrefixed([]string{"go", "python", "rust", "typescript", "java"}, value), nil
			case "style":
				return gosdkPrefixed([]string{"brief", "thorough"}, value), nil
			}
			return nil, nil
		})
	fx.srv = s
	return fx
}

func gosdkPrefixed(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
