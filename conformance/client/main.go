// Command client is the client under test of the official MCP conformance
// suite's client scenarios (@modelcontextprotocol/conformance). The suite
// runs it with the scenario's server URL as the last argument and says
// what to do in the environment:
//
//   - MCP_CONFORMANCE_SCENARIO: the scenario's name;
//   - MCP_CONFORMANCE_PROTOCOL_VERSION: the wire revision (2025-11-25 or
//     2026-07-28); absent (older suites) means the legacy era;
//   - MCP_CONFORMANCE_CONTEXT: scenario data, as JSON (http-custom-headers,
//     the credentials of auth/* scenarios).
//
// Authorization scenarios (auth/*) connect through an auth.Authorizer
// with the grant each tests; the user's browser is played by fetching
// the authorization URL without following its redirect (the suite's
// authorization server approves at once).
//
//	go build -o /tmp/ferry-conformance-client ./conformance/client
//	conformance client --command /tmp/ferry-conformance-client --scenario tools_call
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client [flags…] SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	if version == "" {
		version = protocol.Version20251125
	}
	level := slog.LevelWarn
	if os.Getenv("FERRY_CONFORMANCE_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	r := &run{url: url, version: version, log: log}
	if err := r.scenario(ctx, scenario); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		if errors.Is(err, errUnsupported) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUnsupported = errors.New("not supported by this client")

type run struct {
	url     string
	version string
	log     *slog.Logger
	// hc makes the HTTP requests; nil means the transport's own.
	hc *http.Client
}

// connect opens a client in the run's era with the callbacks every
// scenario may need.
func (r *run) connect(ctx context.Context) (*client.Client, error) {
	return client.Connect(ctx, &streamable.Transport{URL: r.url, Client: r.hc, Logger: r.log}, &client.Options{
		Info:            protocol.Implementation{Name: "ferry-conformance-client", Version: "0.1.0"},
		ProtocolVersion: r.version,
		Logger:          r.log,
		// The "user" accepts every form as the server filled it in: the
		// schema's defaults (SEP-1034), or a plain value of each field's
		// type.
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			content, err := p.Defaults()
			if err != nil {
				return nil, err
			}
			fillForm(p.RequestedSchema, content)
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
		},
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "ferry-conformance",
				Content: protocol.SamplingContent{protocol.TextContent("This is a response from the ferry conformance client.")}, StopReason: "endTurn"}, nil
		},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			return []protocol.Root{{URI: "file:///tmp/ferry-conformance", Name: "conformance"}}, nil
		},
	})
}

// fillForm gives every property of a form schema without a value one of
// its type: what a user who accepts without typing anything would submit
// to a form that needs every field.
func fillForm(schema jsontext.Value, content map[string]any) {
	var s struct {
		Properties map[string]struct {
			Type  string `json:"type"`
			Enum  []any  `json:"enum"`
			OneOf []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	for name, p := range s.Properties {
		if _, ok := content[name]; ok {
			continue
		}
		switch {
		case len(p.Enum) > 0:
			content[name] = p.Enum[0]
		case len(p.OneOf) > 0:
			content[name] = p.OneOf[0].Const
		case p.Type == "boolean":
			content[name] = true
		case p.Type == "integer" || p.Type == "number":
			content[name] = 0
		case p.Type == "array":
			content[name] = []string{}
		default:
			content[name] = "conformance"
		}
	}
}

func (r *run) scenario(ctx context.Context, name string) error {
	if strings.HasPrefix(name, "auth/") {
		return r.authScenario(ctx, name)
	}
	switch name {
	case "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
		"request-metadata", "sep-2322-client-request-state", "http-standard-headers",
		"http-invalid-tool-headers", "json-schema-ref-no-deref", "json-schema-2020-12-preservation":
		return r.callTools(ctx, name)
	case "http-custom-headers":
		return r.customHeaders(ctx)
	case "sep-2640-client-no-prefetch":
		return r.skillsScenario(ctx, false)
	case "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		return r.skillsScenario(ctx, true)
	case "":
		return errors.New("MCP_CONFORMANCE_SCENARIO is not set")
	}
	return fmt.Errorf("%w: unknown scenario %q", errUnsupported, name)
}

// callTools is the flow of most scenarios: list the tools (the client
// drops those it must refuse) and call each one, with arguments made up
// from its schema; list and use the resources and prompts when the server
// has them.
func (r *run) callTools(ctx context.Context, scenario string) error {
	c, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := client.Collect(c.Tools(ctx))
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if scenario == "initialize" || scenario == "json-schema-ref-no-deref" {
		return nil // listing is the whole scenario
	}
	var first error
	for _, t := range tools {
		args := argsFor(t, tools)
		res, err := c.Call(ctx, t.Name, args)
		switch {
		case err != nil:
			r.log.Warn("tools/call failed", "tool", t.Name, "error", err)
			first = cmpErr(first, fmt.Errorf("tools/call %s: %w", t.Name, err))
		case res.IsError:
			r.log.Info("tool reported an error", "tool", t.Name, "content", res.Content)
		default:
			r.log.Info("tool result", "tool", t.Name, "content", res.Content)
		}
	}
	caps := c.ServerCapabilities()
	if caps.Resources != nil {
		resources, err := client.Collect(c.Resources(ctx))
		if err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		if len(resources) > 0 {
			if _, err := c.ReadResource(ctx, resources[0].URI); err != nil {
				first = cmpErr(first, fmt.Errorf("resources/read %s: %w", resources[0].URI, err))
			}
		}
	}
	if caps.Prompts != nil {
		prompts, err := client.Collect(c.Prompts(ctx))
		if err != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
		for _, p := range prompts {
			args := map[string]string{}
			for _, a := range p.Arguments {
				args[a.Name] = "conformance"
			}
			if _, err := c.GetPrompt(ctx, p.Name, args); err != nil {
				first = cmpErr(first, fmt.Errorf("prompts/get %s: %w", p.Name, err))
			}
		}
	}
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// argsFor makes up the arguments of a call to t: each required property
// gets a value of its type. json_schema_echo is given the input schema of
// json_schema_2020_12_tool exactly as listed (the preservation scenario),
// and add_numbers two numbers.
func argsFor(t protocol.Tool, tools []protocol.Tool) jsontext.Value {
	switch t.Name {
	case "add_numbers":
		return jsontext.Value(`{"a":1,"b":2}`)
	case "json_schema_echo":
		for _, o := range tools {
			if o.Name == "json_schema_2020_12_tool" {
				return jsontext.Value(`{"schema":` + string(o.InputSchema) + `}`)
			}
		}
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(t.InputSchema, &s)
	args := map[string]any{}
	for _, name := range s.Required {
		typ, _ := s.Properties[name].Type.(string)
		switch typ {
		case "number", "integer":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		default:
			if name == "region" {
				args[name] = "us-west1"
			} else {
				args[name] = "conformance"
			}
		}
	}
	b, _ := json.Marshal(args, json.Deterministic(true))
	return b
}

// customHeaders calls the tools named by the scenario context with exactly
// the arguments given there (http-custom-headers).
func (r *run) customHeaders(ctx context.Context) error {
	var sc struct {
		ToolCalls []struct {
			Name      string         `json:"name"`
			Arguments jsontext.Value `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	c, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// tools/list first: it says which arguments go into headers.
	if _, err := client.Collect(c.Tools(ctx)); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, call := range sc.ToolCalls {
		if _, err := c.CallTool(ctx, &protocol.CallToolParams{Name: call.Name, Arguments: call.Arguments}); err != nil {
			return fmt.Errorf("tools/call %s: %w", call.Name, err)
		}
	}
	return nil
}
