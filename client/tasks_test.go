package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

func taskServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "tasks", Version: "1"}, &server.Options{Tasks: server.TaskOptions{PollInterval: 10 * time.Millisecond}})
	opt := &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}
	s.AddTool(&protocol.Tool{Name: "slow", Execution: opt},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			var a struct {
				Ms int `json:"ms"`
			}
			json.Unmarshal(args, &a)
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("slept in " + req.TaskID()[:0] + "task")}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "ask", Execution: opt},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("hello " + res.Content["name"].(string))}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "broken", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportRequired}},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "broken down")
		})
	s.AddTool(&protocol.Tool{Name: "plain"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("plain")}}, nil
		})
	return s
}

func TestTasks(t *testing.T) {
	for _, version := range []string{protocol.Version20260728, protocol.Version20251125} {
		t.Run(version, func(t *testing.T) {
			leakcheck.Check(t)
			s := taskServer()
			defer s.Close()
			a, b := memory.NewPipe(jsonrpc.Limits{})
			go s.Run(context.Background(), b)
			var asked atomic.Int32
			c, err := client.Connect(context.Background(), client.StreamTransport{Stream: a}, &client.Options{ProtocolVersion: version,
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					asked.Add(1)
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()

			// An ordinary call of a task-capable tool is not a task.
			if res, err := c.Call(ctx, "slow", map[string]int{"ms": 1}); err != nil || res.Content[0].Text != "slept in task" {
				t.Fatalf("plain call: %v %v", res, err)
			}
			// A tool that cannot be a task answers at once.
			task, res, err := startTask(ctx, c, "plain", nil)
			if err != nil || task != nil || res.Content[0].Text != "plain" {
				t.Fatalf("AsTask plain: %v %v %v", task, res, err)
			}
			task, _, err = startTask(ctx, c, "slow", map[string]int{"ms": 30})
			if err != nil || task == nil || task.Status != protocol.TaskWorking || task.TaskID == "" {
				t.Fatalf("AsTask: %+v %v", task, err)
			}
			var statuses []string
			res, err = c.WaitTask(ctx, task.TaskID, &client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { statuses = append(statuses, t.Status) }})
			if err != nil || res.Content[0].Text != "slept in task" || statuses[len(statuses)-1] != protocol.TaskCompleted {
				t.Fatalf("WaitTask: %v %v %v", res, err, statuses)
			}
			// Questions inside a task reach the same callback.
			if res, err = c.Call(ctx, "ask", nil, client.AsTask(nil)); err != nil || res.Content[0].Text != "hello Ann" || asked.Load() != 1 {
				t.Fatalf("AsTask ask: %v %v, asked %d", res, err, asked.Load())
			}
			// A JSON-RPC error ends the task as failed.
			_, err = c.Call(ctx, "broken", nil, client.AsTask(&client.TaskOptions{}))
			var tf *client.TaskFailedError
			if !errors.As(err, &tf) || tf.Status != protocol.TaskFailed || !strings.Contains(err.Error(), "broken down") {
				t.Fatalf("broken: %v", err)
			}
			// A required tool called without tasks.
			_, err = c.Call(ctx, "broken", nil)
			var je *jsonrpc.Error
			want := protocol.CodeMissingRequiredClientCapability
			if version == protocol.Version20251125 {
				want = jsonrpc.CodeMethodNotFound
			}
			if !errors.As(err, &je) || je.Code != int64(want) {
				t.Fatalf("required tool without a task: %v", err)
			}
			// Cancel a running task, then once it is over.
			task, _, err = startTask(ctx, c, "slow", map[string]int{"ms": 60000})
			if err != nil || task == nil {
				t.Fatal(task, err)
			}
			if err := c.CancelTask(ctx, task.TaskID); err != nil {
				t.Fatal(err)
			}
			got, err := c.GetTask(ctx, task.TaskID)
			if err != nil || got.Status != protocol.TaskCancelled {
				t.Fatalf("after cancel: %+v %v", got, err)
			}
			err = c.CancelTask(ctx, task.TaskID)
			if version == protocol.Version20251125 {
				// "Receivers MUST reject cancellation requests for tasks
				// already in a terminal status ... -32602".
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("cancel of a cancelled task: %v", err)
				}
				list, err := c.ListTasks(ctx, "")
				if err != nil || len(list.Tasks) != 4 {
					t.Fatalf("tasks/list: %+v %v", list, err)
				}
			} else {
				if err != nil {
					t.Fatalf("cancel of a cancelled task: %v", err)
				}
				if _, err := c.ListTasks(ctx, ""); !errors.Is(err, client.ErrNoTasks) {
					t.Fatalf("tasks/list: %v", err)
				}
			}
			if _, err := c.GetTask(ctx, "nope"); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("unknown task: %v", err)
			}
			// Waiting ends with its context; the task goes on.
			task, _, _ = startTask(ctx, c, "slow", map[string]int{"ms": 60000})
			wctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
			defer cancel()
			if _, err := c.WaitTask(wctx, task.TaskID, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("WaitTask with a deadline: %v", err)
			}
			if got, err := c.GetTask(ctx, task.TaskID); err != nil || got.Status != protocol.TaskWorking {
				t.Fatalf("after the wait: %+v %v", got, err)
			}
		})
	}
}

// TestTaskNotifications: a subscriptions/listen stream that names a task
// gets notifications/tasks as the task changes, the last one carrying
// the result.
func TestTaskNotifications(t *testing.T) {
	leakcheck.Check(t)
	s := taskServer()
	defer s.Close()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	go s.Run(context.Background(), b)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: a}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	task, _, err := startTask(ctx, c, "slow", map[string]int{"ms": 100})
	if err != nil || task == nil {
		t.Fatal(task, err)
	}
	sub, err := c.Listen(ctx, protocol.SubscriptionFilter{TaskIDs: []string{task.TaskID, "unknown"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if got := sub.Acknowledged.TaskIDs; len(got) != 1 || got[0] != task.TaskID {
		t.Fatalf("acknowledged %v", got)
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case m := <-sub.Events():
			if m.Method != protocol.NotificationTasks {
				continue
			}
			var d protocol.DetailedTask
			if err := json.Unmarshal(m.Params, &d); err != nil {
				t.Fatal(err)
			}
			if d.Status == protocol.TaskCompleted {
				if !strings.Contains(string(d.Result), "slept in task") {
					t.Fatalf("completed without its result: %s", m.Params)
				}
				return
			}
		case <-timeout:
			t.Fatal("no notifications/tasks with the completed task")
		}
	}
}

// startTask calls a tool as a detached task: it returns the task the
// server made, or else the result it answered with at once.
func startTask(ctx context.Context, c *client.Client, name string, args any) (*protocol.DetailedTask, *protocol.CallToolResult, error) {
	var task *protocol.DetailedTask
	res, err := c.Call(ctx, name, args, client.AsTask(&client.TaskOptions{Detach: true,
		WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { task = t }}}))
	return task, res, err
}
