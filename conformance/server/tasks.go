package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// taskTool adds a tool that can run as a task (support "optional" or
// "required").
func taskTool(s *server.Server, name, description, support string, schema jsontext.Value, h server.ToolHandler) {
	if schema == nil {
		schema = noArgs
	}
	s.AddTool(&protocol.Tool{Name: name, Description: description, InputSchema: schema,
		Execution: &protocol.ToolExecution{TaskSupport: support}}, h)
}

// confirm is the question of the tasks-mrtr-input fixtures.
func confirm(message string) *protocol.ElicitParams {
	return &protocol.ElicitParams{Message: message,
		RequestedSchema: jsontext.Value(`{"type":"object","properties":{"confirm":{"type":"boolean"},"name":{"type":"string"}},"required":["confirm"]}`)}
}

// addTaskTools adds the fixtures of the tasks-* scenarios (the tasks
// extension, SEP-2663; see conformance/NOTES.md).
func addTaskTools(s *server.Server) {
	tool(s, "greet", "Greets someone (never a task)",
		jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return text("Hello, " + stringArg(args, "name") + "!"), nil
		})
	taskTool(s, "slow_compute", "Sleeps for the given seconds, then answers; a task when the client allows", protocol.TaskSupportOptional,
		jsontext.Value(`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			var a struct {
				Seconds float64 `json:"seconds"`
				Label   string  `json:"label"`
			}
			jsonUnmarshal(args, &a)
			if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Computed %s after %gs", a.Label, a.Seconds)), nil
		})
	taskTool(s, "failing_job", "Fails with a tool error after about a second; runs only as a task", protocol.TaskSupportRequired, nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return nil, err
			}
			return &protocol.CallToolResult{IsError: true, Content: []protocol.Content{protocol.TextContent("The job failed")}}, nil
		})
	taskTool(s, "protocol_error_job", "Ends with a JSON-RPC error", protocol.TaskSupportOptional, nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the job broke down")
		})
	taskTool(s, "confirm_delete", "Asks for a confirmation, then deletes (nothing)", protocol.TaskSupportOptional,
		jsontext.Value(`{"type":"object","properties":{"filename":{"type":"string"}}}`),
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			name := stringArg(args, "filename")
			if !req.ClientCapabilities.Elicitation.SupportsForm() {
				return text("Not deleting " + name + ": the client cannot confirm."), nil
			}
			raw, err := req.Ask(ctx, "confirm_delete", protocol.MethodElicit, confirm("Delete "+name+"?"))
			if err != nil {
				return nil, err
			}
			if ok, _ := accepted(raw)["confirm"].(bool); !ok {
				return text("Kept " + name), nil
			}
			return text("Deleted " + name), nil
		})
	taskTool(s, "multi_input", "Asks two questions at once", protocol.TaskSupportOptional, nil,
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			if !req.ClientCapabilities.Elicitation.SupportsForm() {
				return text("The client cannot answer questions."), nil
			}
			answers, err := req.AskAll(ctx,
				server.Question{Key: "first", Method: protocol.MethodElicit, Params: confirm("First?")},
				server.Question{Key: "second", Method: protocol.MethodElicit, Params: confirm("Second?")})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Got %v and %v", accepted(answers["first"])["name"], accepted(answers["second"])["name"])), nil
		})
	s.AddTaskTool(&protocol.Tool{Name: "test_tool_with_task", Description: "Asks the user's name, then greets as a task",
		InputSchema: noArgs, Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportRequired}},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			raw, err := req.Ask(ctx, "user_name", protocol.MethodElicit, elicitName("What is your name?"))
			if err != nil {
				return nil, err
			}
			name, _ := accepted(raw)["name"].(string)
			if err := req.StartTask(); err != nil {
				return nil, err
			}
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
			return text("Hello, " + name + "! (from a task)"), nil
		})
}

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }
