package interop

// Tasks through `ferry serve` in front of server-everything, whose
// simulate-research-query runs only as a task (about four seconds): the
// TypeScript SDK's client in 2025-11-25 (its experimental tasks, on /mcp,
// /servers/everything/mcp and /sse) and raw 2026-07-28 requests of the
// tasks extension through the SDK's transport (testdata/
// gateway_tasks_tsclient.mjs), and ferry's own client in both eras.

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// gatewayTasksWant is what gateway_tasks_tsclient.mjs must print.
const gatewayTasksWant = `{
	"serverTasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
	"researchTaskSupport": "required",
	"legacy": {
		"stream": ["taskCreated", "taskStatus", "result"],
		"result": "# Research Report: ferry",
		"ownResult": "# Research Report: own endpoint",
		"sseResult": "# Research Report: over sse",
		"getTask": "completed",
		"listed": true,
		"otherSessionLists": false,
		"taskResult": "# Research Report: ferry",
		"relatedTask": true,
		"cancelFinished": -32602,
		"cancelRunning": "cancelled",
		"afterCancel": "cancelled",
		"otherSessionGets": -32602,
		"statusNotified": true
	},
	"stateless": {
		"tasksExtension": true,
		"created": "task",
		"status": "completed",
		"result": "# Research Report: stateless",
		"cancel": "complete",
		"afterCancel": "cancelled",
		"list": -32601,
		"unknown": -32602
	},
	"ok": true
}`

func TestGatewayTasksTypeScriptClient(t *testing.T) {
	requireNode(t)
	g := startGateway(t)
	script, err := filepath.Abs(filepath.Join("testdata", "gateway_tasks_tsclient.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, script, nodeModules, g.url)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("gateway_tasks_tsclient.mjs: %v; no JSON summary (%v)\nstdout: %s\nstderr: %s", runErr, err, stdout.Bytes(), stderr.Bytes())
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(gatewayTasksWant), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary:\n got %s\nwant %s\nstderr: %s", jsonString(got), jsonString(want), stderr.Bytes())
	}
}

// ferry's client, both eras, through the same gateway: a task run to its
// end, and one cancelled.
func TestGatewayTasksFerryClient(t *testing.T) {
	g := startGateway(t)
	for _, version := range []string{protocol.LatestLegacyVersion, protocol.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, &streamable.Transport{URL: g.url + "/mcp"}, &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.Call(ctx, "everything__simulate-research-query", map[string]any{"topic": "ferry " + version},
				client.AsTask(&client.TaskOptions{WaitOptions: client.WaitOptions{PollInterval: 200 * time.Millisecond}}))
			if err != nil || len(res.Content) == 0 || !strings.HasPrefix(res.Content[0].Text, "# Research Report: ferry "+version) {
				t.Fatalf("research as a task: %+v, %v", res, err)
			}
			var id string
			_, err = c.Call(ctx, "everything__simulate-research-query", map[string]any{"topic": "cancelled"},
				client.AsTask(&client.TaskOptions{Detach: true, WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { id = t.TaskID }}}))
			if err != nil || id == "" {
				t.Fatalf("detached: %q, %v", id, err)
			}
			if err := c.CancelTask(ctx, id); err != nil {
				t.Fatal(err)
			}
			if st, err := c.GetTask(ctx, id); err != nil || st.Status != protocol.TaskCancelled {
				t.Errorf("after cancel: %+v, %v", st, err)
			}
		})
	}
}
