// Command everything is ferry's example server: it exercises every feature
// of the server library (typed tools with structured output, progress,
// logging, elicitation, sampling, roots, resources, a resource template,
// prompts, completion, subscriptions) and serves it over stdio, or over
// Streamable HTTP at /mcp with -http, to clients of both protocol eras.
//
//	go run ./examples/everything
//	go run ./examples/everything -http 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/httpserver"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP at `ADDR` (path /mcp) instead of stdio; port 0 picks a free one")
	flag.Parse()
	// stdout carries only protocol messages; diagnostics go to stderr.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := New(log)
	if *addr != "" {
		if err := serveHTTP(ctx, s, *addr, log); err != nil {
			fmt.Fprintln(os.Stderr, "everything:", err)
			os.Exit(1)
		}
		return
	}
	if err := s.Run(ctx, stdio.ServerStream()); err != nil && ctx.Err() == nil {
		log.Debug("connection ended", "reason", err)
	}
}

// serveHTTP serves s at http://addr/mcp until ctx ends. The line
// "listening on URL" on stderr tells the actual address.
func serveHTTP(ctx context.Context, s *server.Server, addr string, log *slog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := streamablehandler.New(s, &streamablehandler.Options{Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", l.Addr())
	// httpserver bounds what a client can hold: the time to send headers
	// and a body, idle connections, header size, connections at once.
	served := make(chan error, 1)
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { served <- httpserver.Serve(sctx, l, mux, nil) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// End the legacy sessions and the stateless subscriptions/listen streams
	// (with their completion result), then let the requests in flight
	// finish.
	h.Close()
	s.Close()
	cancel()
	return <-served
}

// New builds the example server.
func New(log *slog.Logger) *server.Server {
	s := server.New(protocol.Implementation{
		Name: "ferry-everything", Title: "ferry: everything", Version: "0.1.0",
		Description: "Example server exercising every MCP feature ferry implements",
	}, &server.Options{
		Instructions: "Tools: echo, add, countdown (reports progress), weather (structured output), ask_name (asks the user), summarize (asks the client's model), roots (lists the client's roots), log (sends log messages), fail (always fails).",
		Logger:       log,
	})
	addTools(s)
	addResources(s)
	addPrompts(s)
	return s
}

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

func addTools(s *server.Server) {
	readOnly := true
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes back the message",
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &readOnly}},
		func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
			return in.Message, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "add", Description: "Adds two numbers"},
		func(ctx context.Context, req *server.Request, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "countdown", Description: "Counts down, reporting progress at each step"},
		func(ctx context.Context, req *server.Request, in countdownIn) (string, error) {
			delay := time.Duration(in.DelayMS) * time.Millisecond
			for i := 1; i <= in.Steps; i++ {
				req.Progress(ctx, float64(i), float64(in.Steps), fmt.Sprintf("step %d of %d", i, in.Steps))
				if i < in.Steps && delay > 0 {
					select {
					case <-ctx.Done():
						return "", context.Cause(ctx)
					case <-time.After(delay):
					}
				}
			}
			return fmt.Sprintf("counted down %d steps", in.Steps), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "weather", Description: "Reports the (made-up) weather of a city, as structured output"},
		func(ctx context.Context, req *server.Request, in weatherIn) (weatherOut, error) {
			unit := in.Unit
			if unit == "" {
				unit = "celsius"
			}
			t := 21.5
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
}

func addResources(s *server.Server) {
	s.AddResource(&protocol.Resource{URI: "ferry://readme", Name: "readme", Title: "README", MIMEType: "text/markdown",
		Description: "What this server is"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "text/markdown",
				Text: "# ferry everything\n\nAn example server exercising every MCP feature.\n"}}}, nil
		})
	s.AddResource(&protocol.Resource{URI: "ferry://logo.png", Name: "logo", MIMEType: "image/png", Description: "A 1x1 PNG"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "image/png", Blob: png}}}, nil
		})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "ferry://greeting/{name}", Name: "greeting",
		Description: "A greeting for anyone", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "text/plain",
				Text: "Hello, " + req.URIVars["name"] + "!"}}}, nil
		})
	names := []string{"alice", "bob", "carol", "dave"}
	s.SetCompleter(protocol.RefResource, "ferry://greeting/{name}",
		func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
			return withPrefix(names, value), nil
		})
}

func addPrompts(s *server.Server) {
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
	languages := []string{"go", "python", "rust", "typescript", "java"}
	s.SetCompleter(protocol.RefPrompt, "review",
		func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
			switch arg {
			case "language":
				return withPrefix(languages, value), nil
			case "style":
				return withPrefix([]string{"brief", "thorough"}, value), nil
			}
			return nil, nil
		})
}

func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
