// Command server is the fixture server of the official MCP conformance
// suite (@modelcontextprotocol/conformance): every tool, resource, prompt
// and completion its server scenarios call, with the exact names and
// texts they check, served over Streamable HTTP at /mcp to clients of both
// protocol eras.
//
//	go run ./conformance/server -addr 127.0.0.1:3001
//
// See conformance/NOTES.md for what each fixture must do, and
// scripts/conformance.sh for the runs.
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
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	// The suite's JSON Schema 2020-12 fixture uses composition and
	// conditional keywords, beyond the built-in validator.
	"github.com/ferrymcp/ferry/jsonschema/full"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/httpserver"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to listen on")
	verbose := flag.Bool("v", false, "log diagnostics to stderr")
	flag.Parse()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := New(log)
	h := streamablehandler.New(s, &streamablehandler.Options{Logger: log, Retry: 500 * time.Millisecond})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ctx.Done()
		s.Close()
		h.Close()
		cancel()
	}()
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	// httpserver bounds what a client can hold: the time to send headers
	// and a body, idle connections, header size, connections at once.
	if err := httpserver.Serve(sctx, ln, mux, &httpserver.Options{ShutdownTimeout: 2 * time.Second}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Base64 payloads of the reference fixture server: a 1x1 PNG and a tiny
// WAV.
const (
	pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavData = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// New builds the fixture server.
func New(log *slog.Logger) *server.Server {
	s := server.New(protocol.Implementation{Name: "ferry-conformance", Version: "0.1.0"}, &server.Options{
		SchemaEngine: full.Engine{},
		Logger:       log,
		Capabilities: &protocol.ServerCapabilities{
			Tools:       &protocol.ToolsCapability{ListChanged: true},
			Resources:   &protocol.ResourcesCapability{ListChanged: true, Subscribe: true},
			Prompts:     &protocol.PromptsCapability{ListChanged: true},
			Completions: &protocol.CompletionsCapability{},
			Logging:     &protocol.LoggingCapability{},
		},
	})
	addContentTools(s)
	addClientTools(s)
	addStatelessTools(s)
	addMRTRTools(s)
	addTaskTools(s)
	addResources(s)
	addPrompts(s)
	addSkills(s)
	return s
}

func text(s string) *protocol.CallToolResult {
	return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(s)}}
}

// noArgs is the input schema of a tool without arguments.
var noArgs = jsontext.Value(`{"type":"object","properties":{}}`)

// tool adds a tool with a raw handler.
func tool(s *server.Server, name, description string, schema jsontext.Value, h server.ToolHandler) {
	if schema == nil {
		schema = noArgs
	}
	s.AddTool(&protocol.Tool{Name: name, Description: description, InputSchema: schema}, h)
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(d):
		return nil
	}
}

// stringArg reads one string argument.
func stringArg(args jsontext.Value, name string) string {
	var m map[string]any
	json.Unmarshal(args, &m)
	v, _ := m[name].(string)
	return v
}

func addContentTools(s *server.Server) {
	tool(s, "test_simple_text", "Tests simple text content response", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return text("This is a simple text response for testing."), nil
		})
	tool(s, "test_image_content", "Tests image content response", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{{Type: protocol.ContentImage, Data: pngData, MIMEType: "image/png"}}}, nil
		})
	tool(s, "test_audio_content", "Tests audio content response", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{{Type: protocol.ContentAudio, Data: wavData, MIMEType: "audio/wav"}}}, nil
		})
	tool(s, "test_embedded_resource", "Tests embedded resource content response", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.EmbeddedResourceContent(protocol.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."})}}, nil
		})
	tool(s, "test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{
				protocol.TextContent("Multiple content types test:"),
				{Type: protocol.ContentImage, Data: pngData, MIMEType: "image/png"},
				protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "test://mixed-content-resource",
					MIMEType: "application/json", Text: `{"test":"data","value":123}`}),
			}}, nil
		})
	tool(s, "test_error_handling", "Tests error response handling", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{IsError: true, Content: []protocol.Content{
				protocol.TextContent("This tool intentionally returns an error for testing")}}, nil
		})
	tool(s, "test_tool_with_progress", "Tests tool that reports progress notifications", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				req.Progress(ctx, p, 100, "")
			}
			return text(fmt.Sprintf("Progress test completed with token %s", req.Meta()["progressToken"])), nil
		})
	tool(s, "test_tool_with_logging", "Tests tool that emits log messages during execution", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				req.Log(ctx, protocol.LevelInfo, "conformance", msg)
			}
			return text("Logging test completed"), nil
		})
	// The schema of the json-schema-2020-12 scenarios, to be listed
	// verbatim.
	tool(s, "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
		jsontext.Value(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return text("Received: " + string(args)), nil
		})
	tool(s, "test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699): closes the response stream before answering", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			if req.CloseStream() {
				// Answer once the stream is closed, so that the response
				// is delivered on the resumed stream.
				if err := sleep(ctx, 100*time.Millisecond); err != nil {
					return nil, err
				}
			}
			return text("Reconnection test completed successfully"), nil
		})
}

func addClientTools(s *server.Server) {
	tool(s, "test_sampling", "Tests server-initiated sampling (LLM completion request)",
		jsontext.Value(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{
				Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser,
					Content: protocol.SamplingContent{protocol.TextContent(stringArg(args, "prompt"))}}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, err
			}
			return text("LLM response: " + samplingText(res)), nil
		})
	tool(s, "test_elicitation", "Tests server-initiated elicitation (user input request)",
		jsontext.Value(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: stringArg(args, "message"),
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, mustJSON(res.Content))), nil
		})
	tool(s, "test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Please review and update the form fields with defaults",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string","description":"User name","default":"John Doe"},"age":{"type":"integer","description":"User age","default":30},"score":{"type":"number","description":"User score","default":95.5},"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, mustJSON(res.Content))), nil
		})
	tool(s, "test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Please select options from the enum fields",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{` +
					`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
					`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
					`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
					`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},` +
					`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}` +
					`},"required":[]}`)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, mustJSON(res.Content))), nil
		})
}

func samplingText(res *protocol.CreateMessageResult) string {
	var parts []string
	for _, c := range res.Content {
		if c.Type == protocol.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v, json.Deterministic(true))
	return string(b)
}

// addStatelessTools adds the fixtures of the 2026-07-28 server-stateless
// and SEP-2243 scenarios.
func addStatelessTools(s *server.Server) {
	tool(s, "test_missing_capability", "Requires the sampling client capability", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{
				Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser,
					Content: protocol.SamplingContent{protocol.TextContent("Say hello")}}},
				MaxTokens: 20,
			})
			if err != nil {
				return nil, err
			}
			return text("Sampled: " + samplingText(res)), nil
		})
	tool(s, "test_streaming_elicitation", "Asks the user for input: never as a request on the response stream", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			if req.ClientCapabilities.Elicitation == nil {
				return text("The client does not support elicitation."), nil
			}
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Please confirm",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
			if err != nil {
				return nil, err
			}
			return text("Elicitation completed: action=" + res.Action), nil
		})
	tool(s, "test_logging_tool", "Sends log messages, which only a request with a logLevel receives", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			req.Log(ctx, protocol.LevelInfo, "conformance", "test_logging_tool ran")
			return text("Logging tool completed"), nil
		})
	tool(s, "test_trigger_tool_change", "Changes the tool list (notifies subscribers)", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			toggle(s, "test_dynamic_tool", true)
			return text("Tool list changed"), nil
		})
	tool(s, "test_trigger_prompt_change", "Changes the prompt list (notifies subscribers)", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			toggle(s, "test_dynamic_prompt", false)
			return text("Prompt list changed"), nil
		})
	tool(s, "test_x_mcp_header", "Echoes a region mirrored into the Mcp-Param-Region header (SEP-2243)",
		jsontext.Value(`{"type":"object","properties":{"region":{"type":"string","description":"Region","x-mcp-header":"Region"}},"required":["region"]}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return text("Region: " + stringArg(args, "region")), nil
		})
}

// dynamic remembers whether the tool and the prompt that the triggers
// toggle are listed.
var dynamic struct {
	sync.Mutex
	tool, prompt bool
}

// toggle adds the named tool or prompt when it is absent and removes it
// when it is present, so that every trigger changes the list.
func toggle(s *server.Server, name string, isTool bool) {
	dynamic.Lock()
	defer dynamic.Unlock()
	switch {
	case isTool && dynamic.tool:
		s.RemoveTools(name)
	case isTool:
		tool(s, name, "A tool added by test_trigger_tool_change", nil,
			func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
				return text("dynamic"), nil
			})
	case dynamic.prompt:
		s.RemovePrompts(name)
	default:
		s.AddPrompt(&protocol.Prompt{Name: name, Description: "A prompt added by test_trigger_prompt_change"},
			func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
				return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("dynamic")}}}, nil
			})
	}
	if isTool {
		dynamic.tool = !dynamic.tool
	} else {
		dynamic.prompt = !dynamic.prompt
	}
}

// elicitName is the question of the MRTR elicitation fixtures.
func elicitName(message string) *protocol.ElicitParams {
	return &protocol.ElicitParams{Message: message,
		RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
}

// accepted decodes an elicitation answer and returns the accepted
// content, or nil.
func accepted(raw jsontext.Value) map[string]any {
	var res protocol.ElicitResult
	if json.Unmarshal(raw, &res) != nil || res.Action != protocol.ElicitAccept {
		return nil
	}
	return res.Content
}

// addMRTRTools adds the fixtures of the input-required-result-* scenarios
// (SEP-2322). They ask under the keys the scenarios name; over a legacy
// session the same questions are server-to-client requests.
func addMRTRTools(s *server.Server) {
	tool(s, "test_input_required_result_elicitation", "Asks the user's name (multi round-trip elicitation)", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "user_name", protocol.MethodElicit, elicitName("What is your name?"))
			if err != nil {
				return nil, err
			}
			name, ok := accepted(raw)["name"].(string)
			if !ok {
				return text("No name was given."), nil
			}
			return text("Hello, " + name + "!"), nil
		})
	tool(s, "test_input_required_result_sampling", "Asks the client's model a question (multi round-trip sampling)", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "capital_question", protocol.MethodCreateMessage, &protocol.CreateMessageParams{
				Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser,
					Content: protocol.SamplingContent{protocol.TextContent("What is the capital of France?")}}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, err
			}
			var res protocol.CreateMessageResult
			json.Unmarshal(raw, &res)
			return text("The model answered: " + samplingText(&res)), nil
		})
	tool(s, "test_input_required_result_list_roots", "Asks the client for its roots (multi round-trip roots/list)", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "client_roots", protocol.MethodListRoots, &protocol.RequestParams{})
			if err != nil {
				return nil, err
			}
			return text("Roots: " + rootsText(raw)), nil
		})
	tool(s, "test_input_required_result_request_state", "Asks for a confirmation, carrying state between rounds", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "confirm", protocol.MethodElicit, &protocol.ElicitParams{Message: "Please confirm",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
			if err != nil {
				return nil, err
			}
			ok, _ := accepted(raw)["ok"].(bool)
			return text(fmt.Sprintf("state-ok: confirmed=%v", ok)), nil
		})
	tool(s, "test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots at once", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			answers, err := req.AskAll(ctx,
				server.Question{Key: "user_name", Method: protocol.MethodElicit, Params: elicitName("What is your name?")},
				server.Question{Key: "greeting", Method: protocol.MethodCreateMessage, Params: &protocol.CreateMessageParams{
					Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser,
						Content: protocol.SamplingContent{protocol.TextContent("Generate a greeting")}}},
					MaxTokens: 50,
				}},
				server.Question{Key: "client_roots", Method: protocol.MethodListRoots, Params: &protocol.RequestParams{}},
			)
			if err != nil {
				return nil, err
			}
			var greeting protocol.CreateMessageResult
			json.Unmarshal(answers["greeting"], &greeting)
			return text(fmt.Sprintf("Name: %v; greeting: %s; roots: %s",
				accepted(answers["user_name"])["name"], samplingText(&greeting), rootsText(answers["client_roots"]))), nil
		})
	tool(s, "test_input_required_result_multi_round", "Asks two questions in two rounds", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "step1", protocol.MethodElicit, elicitName("Step 1: What is your name?"))
			if err != nil {
				return nil, err
			}
			name := accepted(raw)["name"]
			raw, err = req.Ask(ctx, "step2", protocol.MethodElicit, &protocol.ElicitParams{Message: "Step 2: What is your favorite color?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Hello %v, your favorite color is %v.", name, accepted(raw)["color"])), nil
		})
	tool(s, "test_input_required_result_tampered_state", "Asks for a confirmation; its requestState is integrity-protected", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "confirm", protocol.MethodElicit, &protocol.ElicitParams{Message: "Please confirm",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
			if err != nil {
				return nil, err
			}
			ok, _ := accepted(raw)["ok"].(bool)
			return text(fmt.Sprintf("state-ok: confirmed=%v", ok)), nil
		})
	tool(s, "test_input_required_result_capabilities", "Asks only what the client declared it can answer", nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			caps := req.ClientCapabilities
			var qs []server.Question
			if caps.Sampling != nil {
				qs = append(qs, server.Question{Key: "capital_question", Method: protocol.MethodCreateMessage, Params: &protocol.CreateMessageParams{
					Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser,
						Content: protocol.SamplingContent{protocol.TextContent("What is the capital of France?")}}},
					MaxTokens: 100,
				}})
			}
			if caps.Elicitation.SupportsForm() {
				qs = append(qs, server.Question{Key: "user_name", Method: protocol.MethodElicit, Params: elicitName("What is your name?")})
			}
			if caps.Roots != nil {
				qs = append(qs, server.Question{Key: "client_roots", Method: protocol.MethodListRoots, Params: &protocol.RequestParams{}})
			}
			if len(qs) == 0 {
				return text("The client declared no capability to ask anything of."), nil
			}
			answers, err := req.AskAll(ctx, qs...)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Received %d answer(s).", len(answers))), nil
		})
}

func rootsText(raw jsontext.Value) string {
	var res protocol.ListRootsResult
	json.Unmarshal(raw, &res)
	var uris []string
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	if len(uris) == 0 {
		return "(none)"
	}
	return strings.Join(uris, ", ")
}

func addResources(s *server.Server) {
	static := func(contents protocol.ResourceContents) server.ResourceHandler {
		return func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{contents}}, nil
		}
	}
	s.AddResource(&protocol.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
		static(protocol.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}))
	s.AddResource(&protocol.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG image)", MIMEType: "image/png"},
		static(protocol.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: pngData}))
	s.AddResource(&protocol.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to", MIMEType: "text/plain"},
		static(protocol.ResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content"}))
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template",
		Description: "A resource template with an id parameter", MIMEType: "application/json"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			id := req.URIVars["id"]
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "application/json",
				Text: mustJSON(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})}}}, nil
		})
}

func addPrompts(s *server.Server) {
	s.AddPrompt(&protocol.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser,
				Content: protocol.TextContent("This is a simple prompt for testing.")}}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with required arguments",
		Arguments: []protocol.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser,
				Content: protocol.TextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))}}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []protocol.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{
				{Role: protocol.RoleUser, Content: protocol.EmbeddedResourceContent(protocol.ResourceContents{
					URI: args["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."})},
				{Role: protocol.RoleUser, Content: protocol.TextContent("Please process the embedded resource above.")},
			}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "test_prompt_with_image", Description: "A prompt with image content"},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{
				{Role: protocol.RoleUser, Content: protocol.Content{Type: protocol.ContentImage, Data: pngData, MIMEType: "image/png"}},
				{Role: protocol.RoleUser, Content: protocol.TextContent("Please analyze the image above.")},
			}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for context first (multi round-trip)"},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			raw, err := req.Ask(ctx, "user_context", protocol.MethodElicit, &protocol.ElicitParams{Message: "What context should the prompt use?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)})
			if err != nil {
				return nil, err
			}
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser,
				Content: protocol.TextContent(fmt.Sprintf("Use this context: %v", accepted(raw)["context"]))}}}, nil
		})
	s.SetCompleter(protocol.RefPrompt, "test_prompt_with_arguments",
		func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
			var out []string
			for _, v := range []string{"test", "testValue1", "testValue2", "example"} {
				if strings.HasPrefix(v, value) {
					out = append(out, v)
				}
			}
			return out, nil
		})
}
