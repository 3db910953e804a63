package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/memory"
)

// TestCallOptions: Lend always leaves a release the caller may call, even
// when the call failed; AsTask waits for the task, or with Detach returns
// no result once the task is made (OnStatus has seen it), and gives a
// tool the server does not run as a task its result at once; a session
// older than tasks refuses AsTask with ErrNoTasks.
func TestCallOptions(t *testing.T) {
	for _, tc := range []struct {
		name, version, tool string
		task                *client.TaskOptions // nil: no AsTask
		wantText            string              // "": no result
		wantTask            bool                // OnStatus saw a task
		wantErr             error               // errors.Is
		wantRPCError        bool                // a *jsonrpc.Error
	}{
		{"lent", protocol.Version20251125, "plain", nil, "plain", false, nil, false},
		{"lent, failed", protocol.Version20260728, "nope", nil, "", false, nil, true},
		{"task waited, stateless", protocol.Version20260728, "slow", &client.TaskOptions{}, "slept in task", true, nil, false},
		{"task waited, 2025-11-25", protocol.Version20251125, "slow", &client.TaskOptions{}, "slept in task", true, nil, false},
		{"task detached", protocol.Version20260728, "slow", &client.TaskOptions{Detach: true}, "", true, nil, false},
		{"not a task tool", protocol.Version20251125, "plain", &client.TaskOptions{Detach: true}, "plain", false, nil, false},
		{"no tasks before 2025-11-25", protocol.Version20250618, "slow", &client.TaskOptions{}, "", false, client.ErrNoTasks, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			s := taskServer()
			defer s.Close()
			a, b := memory.NewPipe(jsonrpc.Limits{})
			go s.Run(context.Background(), b)
			c, err := client.Connect(context.Background(), client.StreamTransport{Stream: a}, &client.Options{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var release func()
			opts := []client.CallOption{client.Lend(&release)}
			var task *protocol.DetailedTask
			if tc.task != nil {
				tc.task.OnStatus = func(t *protocol.DetailedTask) { task = t }
				opts = append(opts, client.AsTask(tc.task))
			}
			res, err := c.Call(context.Background(), tc.tool, map[string]int{"ms": 1}, opts...)
			if release == nil {
				t.Fatal("Lend left release nil")
			}
			defer release()
			var je *jsonrpc.Error
			if rpc := errors.As(err, &je); rpc != tc.wantRPCError || !rpc && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v (a JSON-RPC error: %v)", err, tc.wantErr, tc.wantRPCError)
			}
			if got := resultText(res); got != tc.wantText {
				t.Errorf("result %q, want %q", got, tc.wantText)
			}
			if (task != nil) != tc.wantTask {
				t.Errorf("OnStatus saw task %+v, want one: %v", task, tc.wantTask)
			}
		})
	}
}

func resultText(res *protocol.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}
