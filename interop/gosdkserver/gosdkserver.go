// Package gosdkserver builds an MCP server with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), for ferry's client to talk to
// in the interop tests: typed tools (one with structured output), tools
// that report progress, log, and ask the client for input (elicitation,
// sampling, roots), a resource, a resource template, a prompt, completion
// and resource subscriptions.
//
// The tools that ask the client something are written the go-sdk v1.8.0
// way that serves both protocol eras: the handler returns InputRequests
// and is called again with the client's InputResponses. For a 2026-07-28
// client the SDK sends that as an input_required result; for a legacy
// session its server middleware sends the server-to-client requests
// itself and calls the handler again.
//
// The command in ./cmd serves it over stdio.
package gosdkserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's implementation name.
const Name = "gosdk-everything"

// Resource URIs and template served.
const (
	InfoURI      = "gosdk://info"
	ItemTemplate = "gosdk://items/{id}"
)

// LateTool is the tool that the set_late tool adds and removes.
const LateTool = "late"

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

type addIn struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

// AddOut is the structured output of the add tool.
type AddOut struct {
	Sum int `json:"sum"`
}

type weatherIn struct {
	City string `json:"city"`
	Unit string `json:"unit,omitempty" jsonschema:"celsius or fahrenheit"`
}

// WeatherOut is the structured output of the weather tool.
type WeatherOut struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Unit        string  `json:"unit"`
	Conditions  string  `json:"conditions"`
}

type countdownIn struct {
	Steps   int `json:"steps" jsonschema:"number of steps"`
	DelayMS int `json:"delayMs,omitempty" jsonschema:"milliseconds between steps"`
}

type setLateIn struct {
	Present bool `json:"present"`
}

type logIn struct {
	Level   string `json:"level,omitempty"`
	Message string `json:"message"`
}

type summarizeIn struct {
	Text string `json:"text"`
}

type empty struct{}

// New returns the server, serving every protocol version go-sdk knows.
func New() *mcp.Server { return NewVersions(nil) }

// NewVersions returns the server restricted to the given protocol
// versions (ServerOptions.SupportedProtocolVersions); nil means all.
func NewVersions(versions []string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "go-sdk: everything", Version: "1.8.0-interop"}, &mcp.ServerOptions{
		Instructions: "go-sdk interop server",
		// Small pages, so that clients must follow cursors.
		PageSize: 3,
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var values []string
			switch {
			case req.Params.Ref.Type == "ref/prompt" && req.Params.Ref.Name == "greet" && req.Params.Argument.Name == "style":
				values = withPrefix([]string{"formal", "friendly", "funny"}, req.Params.Argument.Value)
			case req.Params.Ref.Type == "ref/resource" && req.Params.Ref.URI == ItemTemplate:
				values = withPrefix([]string{"apple", "apricot", "banana"}, req.Params.Argument.Value)
			}
			if values == nil {
				values = []string{}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
		SupportedProtocolVersions: versions,
		SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two integers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, AddOut, error) {
			return nil, AddOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Made-up weather, as structured output"},
		func(ctx context.Context, req *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, WeatherOut, error) {
			unit, t := "celsius", 18.0
			if in.Unit == "fahrenheit" {
				unit, t = "fahrenheit", 64.4
			}
			return nil, WeatherOut{City: in.City, Temperature: t, Unit: unit, Conditions: "cloudy"}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails"},
		func(ctx context.Context, req *mcp.CallToolRequest, in empty) (*mcp.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("go-sdk tool failure")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "countdown", Description: "Reports progress at each step"},
		func(ctx context.Context, req *mcp.CallToolRequest, in countdownIn) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if token != nil {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: float64(in.Steps),
						Message: fmt.Sprintf("step %d of %d", i, in.Steps),
					}); err != nil {
						return nil, nil, err
					}
				}
				if i < in.Steps && in.DelayMS > 0 {
					select {
					case <-ctx.Done():
						return nil, nil, ctx.Err()
					case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
					}
				}
			}
			return text(fmt.Sprintf("counted down %d steps", in.Steps)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends a log message"},
		func(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, any, error) {
			level := mcp.LoggingLevel(in.Level)
			if level == "" {
				level = "info"
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "gosdk", Data: in.Message}); err != nil {
				return nil, nil, err
			}
			return text("logged"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask_name", Description: "Asks the user for their name (elicitation)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in empty) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["name"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
					Message: "What is your name?",
					RequestedSchema: map[string]any{"type": "object",
						"properties": map[string]any{"name": map[string]any{"type": "string"}},
						"required":   []string{"name"}},
				}}}, nil, nil
			}
			er, ok := resp.(*mcp.ElicitResult)
			if !ok {
				return nil, nil, fmt.Errorf("input response %T is not an elicitation result", resp)
			}
			if er.Action != "accept" {
				return text("no name (" + er.Action + ")"), nil, nil
			}
			return text(fmt.Sprintf("Hello, %v!", er.Content["name"])), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "summarize", Description: "Asks the client's model (sampling)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in summarizeIn) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["summary"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"summary": &mcp.CreateMessageParams{
					MaxTokens: 100,
					Messages: []*mcp.SamplingMessage{{Role: "user",
						Content: &mcp.TextContent{Text: "Summarize: " + in.Text}}},
				}}}, nil, nil
			}
			var out []string
			switch r := resp.(type) {
			case *mcp.CreateMessageWithToolsResult:
				for _, c := range r.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						out = append(out, tc.Text)
					}
				}
				out = append(out, "model="+r.Model)
			case *mcp.CreateMessageResult:
				if tc, ok := r.Content.(*mcp.TextContent); ok {
					out = append(out, tc.Text)
				}
				out = append(out, "model="+r.Model)
			default:
				return nil, nil, fmt.Errorf("input response %T is not a sampling result", resp)
			}
			return text(strings.Join(out, " ")), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots"},
		func(ctx context.Context, req *mcp.CallToolRequest, in empty) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["roots"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
			}
			rr, ok := resp.(*mcp.ListRootsResult)
			if !ok {
				return nil, nil, fmt.Errorf("input response %T is not a roots result", resp)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d root(s)", len(rr.Roots))
			for _, r := range rr.Roots {
				fmt.Fprintf(&b, "\n%s %s", r.URI, r.Name)
			}
			return text(b.String()), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Tells the subscribers of " + InfoURI + " that it changed"},
		func(ctx context.Context, req *mcp.CallToolRequest, in empty) (*mcp.CallToolResult, any, error) {
			if err := NotifyInfoUpdated(ctx, s); err != nil {
				return nil, nil, err
			}
			return text("touched"), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "set_late", Description: "Adds or removes the tool " + LateTool + ", so that the tool list changes"},
		func(ctx context.Context, req *mcp.CallToolRequest, in setLateIn) (*mcp.CallToolResult, any, error) {
			if !in.Present {
				s.RemoveTools(LateTool)
				return text("removed"), nil, nil
			}
			mcp.AddTool(s, &mcp.Tool{Name: LateTool, Description: "Added late"},
				func(ctx context.Context, req *mcp.CallToolRequest, in empty) (*mcp.CallToolResult, any, error) {
					return text("late"), nil, nil
				})
			return text("added"), nil, nil
		})

	s.AddResource(&mcp.Resource{URI: InfoURI, Name: "info", Title: "Info", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "served by the go-sdk"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ItemTemplate, Name: "item", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "gosdk://items/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: fmt.Sprintf(`{"id":%q}`, id)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}, {Name: "style"}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			style := req.Params.Arguments["style"]
			if style == "" {
				style = "friendly"
			}
			return &mcp.GetPromptResult{Description: "A greeting",
				Messages: []*mcp.PromptMessage{{Role: "user",
					Content: &mcp.TextContent{Text: fmt.Sprintf("Say a %s hello to %s.", style, req.Params.Arguments["name"])}}}}, nil
		})
	return s
}

// NotifyInfoUpdated tells subscribers of [InfoURI] that it changed.
func NotifyInfoUpdated(ctx context.Context, s *mcp.Server) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: InfoURI})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
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
