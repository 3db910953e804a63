package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// The test binary is also a stdio upstream whose tools run as tasks:
// run with FERRY_GATEWAY_TASK_SERVER set, it serves taskServer and exits
// (before TestMain, as a child of a test).
func init() {
	if os.Getenv("FERRY_GATEWAY_TASK_SERVER") != "" {
		err := taskServer("tasks").Run(context.Background(), stdio.ServerStream())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// taskServer's "elicit" runs as a task that asks its client; "hold"
// (an ordinary call) waits for its ms.
func taskServer(name string) *server.Server {
	s := server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "elicit", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "whose task is this?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{}}`)})
			if err != nil {
				return "", err
			}
			return "answered: " + res.Action, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "hold"}, func(ctx context.Context, req *server.Request, in sleepIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return "held", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	return s
}

// A task's question is never put to another client: over a shared
// stdio process nothing says whom it is for, and the one client with a
// call in flight there is not the task's. It is refused.
func TestTaskQuestionNotPutToAnotherClient(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	up := &config.Server{Name: "t", Transport: config.Stdio, Command: exe, Env: map[string]string{"FERRY_GATEWAY_TASK_SERVER": "1"}}
	g, url := start(t, []*config.Server{up}, &Options{Tasks: TaskOptions{PollInterval: 20 * time.Millisecond}})
	ctx := ctxT(t)
	var asked atomic.Int32
	other := connect(t, url+"/mcp", protocol.LatestLegacyVersion, &client.Options{
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			asked.Add(1)
			return &protocol.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		}})
	held := make(chan error, 1)
	go func() {
		_, err := other.Call(ctx, "t__hold", sleepIn{Ms: 3000})
		held <- err
	}()
	owner := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	// Wait until the other client's call is in flight upstream.
	for l := g.upstream("t").shared; callsIn(l) == 0; {
		time.Sleep(5 * time.Millisecond)
	}
	res, err := owner.Call(ctx, "t__elicit", struct{}{}, client.AsTask(nil))
	if asked.Load() != 0 {
		t.Errorf("another client was asked the task's question (%d times); the task got %+v, %v", asked.Load(), res, err)
	}
	if err == nil && !res.IsError {
		t.Errorf("the task's question was answered: %+v", res)
	}
	// However the transport hands it over: one that reaches no call of
	// the gateway's is refused too, not routed by the link's gate.
	q := jsontext.Value(`{"message":"whose?","requestedSchema":{"type":"object","properties":{}},"_meta":{"` +
		protocol.MetaRelatedTask + `":{"taskId":"abc"}}}`)
	if _, err := g.upstream("t").shared.ask(context.Background(), protocol.MethodElicit, q); err == nil || asked.Load() != 0 {
		t.Errorf("an unrouted task question: %v; the other client was asked %d times", err, asked.Load())
	}
	if err := <-held; err != nil {
		t.Errorf("the other client's call: %v", err)
	}
}

// callsIn returns how many client calls are in flight on l.
func callsIn(l *link) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.gate.calls)
}

// taskTools is an upstream whose tools run as tasks: "slow" sleeps for
// its ms (or until its task is cancelled, which it reports on cancelled),
// "must" can only run as one.
type taskTools struct {
	cancelled chan string // the name of each call whose work was cancelled
}

func taskUpstream(t *testing.T, name string, stateless bool) (*config.Server, *taskTools) {
	t.Helper()
	tt := &taskTools{cancelled: make(chan string, 8)}
	s := server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, nil)
	slow := func(ctx context.Context, req *server.Request, in sleepIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return fmt.Sprintf("slept %d on %s", in.Ms, name), nil
		case <-ctx.Done():
			tt.cancelled <- name
			return "", ctx.Err()
		}
	}
	server.AddTool(s, &protocol.Tool{Name: "slow", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}}, slow)
	server.AddTool(s, &protocol.Tool{Name: "must", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportRequired}}, slow)
	server.AddTool(s, &protocol.Tool{Name: "fail", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return "", jsonrpc.NewError(-32000, "fail failed on purpose")
		})
	server.AddTool(s, &protocol.Tool{Name: "plain"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "plain", nil })
	h := streamablehandler.New(s, &streamablehandler.Options{DisableSessions: stateless})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
		s.Close()
	})
	return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL + "/mcp"}, tt
}

// connectAs opens a client to url in the given revision with a bearer
// token.
func connectAs(t *testing.T, url, version, token string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &streamable.Transport{URL: url}
	if token != "" {
		tr.Header = http.Header{"Authorization": {"Bearer " + token}}
	}
	c, err := client.Connect(ctx, tr, &client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (%s): %v", url, version, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// detach starts a task and returns its id.
func detach(t *testing.T, ctx context.Context, c *client.Client, tool string, ms int) string {
	t.Helper()
	var id string
	_, err := c.Call(ctx, tool, sleepIn{Ms: ms}, client.AsTask(&client.TaskOptions{Detach: true,
		WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { id = t.TaskID }}}))
	if err != nil || id == "" {
		t.Fatalf("%s as a task: id %q, %v", tool, id, err)
	}
	return id
}

// Task-augmented calls, tasks/get, tasks/result, tasks/list and
// tasks/cancel go through the gateway in both eras, on the aggregated
// endpoint and a server's own, to servers of both eras.
func TestTasksThroughGateway(t *testing.T) {
	legacyUp, _ := taskUpstream(t, "lt", false)
	statelessUp, _ := taskUpstream(t, "st", true)
	_, url := start(t, []*config.Server{legacyUp, statelessUp}, &Options{Tasks: TaskOptions{PollInterval: 20 * time.Millisecond}})
	for _, era := range eras {
		for _, up := range []string{"lt", "st"} {
			for _, ep := range []struct{ path, tool string }{{"/mcp", up + "__"}, {"/servers/" + up + "/mcp", ""}} {
				t.Run(era.name+" "+ep.path, func(t *testing.T) {
					ctx := ctxT(t)
					c := connect(t, url+ep.path, era.version, nil)
					want := fmt.Sprintf("slept 30 on %s", up)
					if got := text(t)(c.Call(ctx, ep.tool+"slow", sleepIn{Ms: 30}, client.AsTask(nil))); got != want {
						t.Errorf("slow as a task: %q, want %q", got, want)
					}
					if got := text(t)(c.Call(ctx, ep.tool+"must", sleepIn{Ms: 1}, client.AsTask(nil))); got != fmt.Sprintf("slept 1 on %s", up) {
						t.Errorf("must as a task: %q", got)
					}
					id := detach(t, ctx, c, ep.tool+"slow", 10)
					if got := text(t)(c.WaitTask(ctx, id, nil)); got != "slept 10 on "+up {
						t.Errorf("WaitTask: %q", got)
					}
					if st, err := c.GetTask(ctx, id); err != nil || st.Status != protocol.TaskCompleted {
						t.Errorf("GetTask after the end: %+v, %v", st, err)
					}
					var tf *client.TaskFailedError
					if _, err := c.Call(ctx, ep.tool+"fail", struct{}{}, client.AsTask(nil)); !errors.As(err, &tf) || !strings.Contains(err.Error(), "fail failed on purpose") {
						t.Errorf("fail as a task: %v", err)
					}
					checkList(t, ctx, c, era.name, id)
					checkCancel(t, ctx, c, ep.tool)
				})
			}
		}
	}
}

// checkList: a legacy session lists its tasks; the extension has no
// tasks/list.
func checkList(t *testing.T, ctx context.Context, c *client.Client, era, id string) {
	t.Helper()
	res, err := c.ListTasks(ctx, "")
	if era != "legacy" {
		if !errors.Is(err, client.ErrNoTasks) {
			t.Errorf("ListTasks, stateless: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range res.Tasks {
		if tk.TaskID == id {
			return
		}
	}
	t.Errorf("tasks/list lacks %s: %+v", id, res.Tasks)
}

// checkCancel: a cancelled task is cancelled, and so is its work.
func checkCancel(t *testing.T, ctx context.Context, c *client.Client, prefix string) {
	t.Helper()
	id := detach(t, ctx, c, prefix+"slow", 60_000)
	if err := c.CancelTask(ctx, id); err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	st, err := c.GetTask(ctx, id)
	if err != nil || st.Status != protocol.TaskCancelled {
		t.Errorf("after cancel: %+v, %v", st, err)
	}
}

// The work of a cancelled task stops upstream too, and the task's id is
// the gateway's, not the server's.
func TestTaskCancelStopsUpstreamWork(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless upstream ", stateless), func(t *testing.T) {
			up, tt := taskUpstream(t, "u", stateless)
			_, url := start(t, []*config.Server{up}, &Options{Tasks: TaskOptions{PollInterval: 20 * time.Millisecond}})
			for _, era := range eras {
				ctx := ctxT(t)
				c := connect(t, url+"/mcp", era.version, nil)
				id := detach(t, ctx, c, "u__slow", 60_000)
				if err := c.CancelTask(ctx, id); err != nil {
					t.Fatalf("%s: CancelTask: %v", era.name, err)
				}
				select {
				case <-tt.cancelled:
				case <-ctx.Done():
					t.Fatalf("%s: the upstream work was not cancelled", era.name)
				}
			}
		})
	}
}

// A task is its caller's: another caller can neither read, cancel nor
// list it, in either era.
func TestTaskBoundToCaller(t *testing.T) {
	up, _ := taskUpstream(t, "u", false)
	_, url := start(t, []*config.Server{up}, &Options{Auth: BearerTokens([]string{"alice-token", "bob-token"})})
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			alice := connectAs(t, url+"/mcp", era.version, "alice-token")
			bob := connectAs(t, url+"/mcp", era.version, "bob-token")
			id := detach(t, ctx, alice, "u__slow", 60_000)
			if _, err := bob.GetTask(ctx, id); err == nil || !strings.Contains(err.Error(), "Task not found") {
				t.Errorf("bob reads alice's task: %v", err)
			}
			if err := bob.CancelTask(ctx, id); err == nil {
				t.Errorf("bob cancels alice's task")
			}
			if era.name == "legacy" {
				if res, err := bob.ListTasks(ctx, ""); err != nil || len(res.Tasks) != 0 {
					t.Errorf("bob lists: %+v, %v", res, err)
				}
				if res, err := alice.ListTasks(ctx, ""); err != nil || len(res.Tasks) != 1 {
					t.Errorf("alice lists: %+v, %v", res, err)
				}
			}
			if st, err := alice.GetTask(ctx, id); err != nil || st.Status != protocol.TaskWorking {
				t.Errorf("alice reads her task: %+v, %v", st, err)
			}
			if err := alice.CancelTask(ctx, id); err != nil {
				t.Errorf("alice cancels her task: %v", err)
			}
		})
	}
}

// A legacy session's tasks without a caller are the session's: another
// session reaches none of them.
func TestTaskBoundToSession(t *testing.T) {
	up, _ := taskUpstream(t, "u", false)
	_, url := start(t, []*config.Server{up}, nil)
	ctx := ctxT(t)
	a := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	b := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	id := detach(t, ctx, a, "u__slow", 60_000)
	if _, err := b.GetTask(ctx, id); err == nil {
		t.Errorf("another session reads the task")
	}
	if res, err := b.ListTasks(ctx, ""); err != nil || len(res.Tasks) != 0 {
		t.Errorf("another session lists: %+v, %v", res, err)
	}
	a.CancelTask(ctx, id)
}

// Tasks go through the HTTP+SSE endpoints too, for a 2025-11-25 client.
func TestTasksOverSSE(t *testing.T) {
	up, _ := taskUpstream(t, "u", false)
	_, url := start(t, []*config.Server{up}, &Options{Tasks: TaskOptions{PollInterval: 20 * time.Millisecond}})
	for _, ep := range []struct{ path, tool string }{{"/sse", "u__slow"}, {"/servers/u/sse", "slow"}} {
		ctx := ctxT(t)
		c, err := client.Connect(ctx, &sse.Transport{URL: url + ep.path}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		id := detach(t, ctx, c, ep.tool, 10)
		if got := text(t)(c.WaitTask(ctx, id, nil)); got != "slept 10 on u" {
			t.Errorf("%s: %q", ep.path, got)
		}
		checkList(t, ctx, c, "legacy", id)
	}
}

// The tasks running at once are bounded, those of one owner to a share:
// past either, a task-augmented call fails with an error saying so.
func TestTasksBounded(t *testing.T) {
	up, _ := taskUpstream(t, "u", false)
	_, url := start(t, []*config.Server{up}, &Options{Tasks: TaskOptions{MaxRunning: 2}})
	ctx := ctxT(t)
	var sessions []*client.Client
	for range 3 {
		sessions = append(sessions, connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil))
	}
	detach(t, ctx, sessions[0], "u__slow", 60_000)
	if _, err := sessions[0].Call(ctx, "u__slow", sleepIn{Ms: 60_000}, client.AsTask(&client.TaskOptions{Detach: true})); err == nil || !strings.Contains(err.Error(), "most one client may") {
		t.Errorf("a second task of one session: %v", err)
	}
	detach(t, ctx, sessions[1], "u__slow", 60_000)
	if _, err := sessions[2].Call(ctx, "u__slow", sleepIn{Ms: 60_000}, client.AsTask(&client.TaskOptions{Detach: true})); err == nil || !strings.Contains(err.Error(), "this gateway runs 2") {
		t.Errorf("a task past MaxRunning: %v", err)
	}
}

// One owner holds a share of the in-process store: its own oldest
// finished task makes room for its next, and past its share of running
// ones it is refused, while another owner's tasks stay.
func TestMemoryTasksShare(t *testing.T) {
	m := newMemoryTasks(20) // a share of 2
	ctx := context.Background()
	now := time.Now()
	add := func(id, owner string) error {
		return m.CreateTask(ctx, &TaskRecord{ID: id, Owner: owner, Status: protocol.TaskWorking, CreatedAt: now, TTL: time.Hour})
	}
	for _, id := range []string{"a1", "a2"} {
		if err := add(id, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if err := add("b1", "b"); err != nil {
		t.Fatal(err)
	}
	if err := add("a3", "a"); err == nil || !strings.Contains(err.Error(), "most one client may") {
		t.Fatalf("a third running task of one owner: %v", err)
	}
	m.UpdateTask(ctx, &TaskRecord{ID: "a1", Owner: "a", Status: protocol.TaskCompleted, CreatedAt: now, TTL: time.Hour})
	if err := add("a3", "a"); err != nil {
		t.Fatalf("with a finished task to drop: %v", err)
	}
	for id, want := range map[string]bool{"a1": false, "a2": true, "a3": true, "b1": true} {
		if _, err := m.GetTask(ctx, id); (err == nil) != want {
			t.Errorf("%s kept: %v, want %v", id, err == nil, want)
		}
	}
}
