package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// taskToolServer has "quick", a tool that may run as a task and answers
// at once, and "wait", one that runs until its task is cancelled.
func taskToolServer(opts *server.Options) *server.Server {
	s := server.New(protocol.Implementation{Name: "tasks", Version: "1"}, opts)
	optional := &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}
	s.AddTool(&protocol.Tool{Name: "quick", Execution: optional},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("secret result")}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "wait", Execution: optional},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	return s
}

// openSession serves s on a memory pipe and returns a bare JSON-RPC
// connection to it after the 2025-11-25 handshake, and the function that
// ends the session.
func openSession(t *testing.T, s *server.Server) (*jsonrpc2.Conn, func()) {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	// The cleanup holds the connections until end drops them, so that an
	// ended session's memory is free to be reused.
	conns := []interface{ Close() error }{s.Connect(ctx, a), jsonrpc2.NewConn(ctx, b, nil)}
	c := conns[1].(*jsonrpc2.Conn)
	end := func() {
		for _, conn := range conns {
			conn.Close()
		}
		conns = nil
		cancel()
	}
	t.Cleanup(end)
	params := `{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"},"capabilities":{}}`
	if _, err := c.Call(ctx, "initialize", jsontext.Value(params)); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	return c, end
}

// callAsTask calls tool as a 2025-11-25 task and returns the task's id.
func callAsTask(c *jsonrpc2.Conn, tool string) (string, error) {
	m, err := c.Call(context.Background(), "tools/call", map[string]any{"name": tool, "task": map[string]any{}})
	if err != nil {
		return "", err
	}
	var res protocol.CreateTaskResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		return "", err
	}
	return res.Task.TaskID, nil
}

// listTasks returns the ids tasks/list shows.
func listTasks(t *testing.T, c *jsonrpc2.Conn) []string {
	t.Helper()
	m, err := c.Call(context.Background(), "tasks/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var res protocol.ListTasksResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res.Tasks))
	for i, task := range res.Tasks {
		ids[i] = task.TaskID
	}
	return ids
}

// TestEndedSessionTasksUnlisted: a session lists the tasks it created,
// and no later session lists them. Each round ends sessions that created
// a task and opens new ones after a collection, which frees the ended
// sessions' memory for the new ones: on b211c63 a task's owner was the
// session's address, and a new session allocated where an ended one was
// listed its tasks (3 of 1,640 new sessions on the conformance server).
func TestEndedSessionTasksUnlisted(t *testing.T) {
	s := taskToolServer(nil)
	defer s.Close()
	const rounds, perRound = 8, 64
	for round := range rounds {
		var ends []func()
		for range perRound {
			c, end := openSession(t, s)
			if seen := listTasks(t, c); len(seen) > 0 {
				t.Fatalf("round %d: a new session lists %d tasks of ended sessions: %v", round, len(seen), seen)
			}
			id, err := callAsTask(c, "quick")
			if err != nil {
				t.Fatal(err)
			}
			if seen := listTasks(t, c); len(seen) != 1 || seen[0] != id {
				t.Fatalf("round %d: the session lists %v, want its task %s", round, seen, id)
			}
			ends = append(ends, end)
		}
		for _, end := range ends {
			end()
		}
		runtime.GC()
	}
}

// statelessTaskMessage is a stateless request of the tasks extension.
func statelessTaskMessage(t *testing.T, method, params string) *jsonrpc.Message {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
		method, params)
	m, err := jsonrpc.Decode([]byte(body), jsonrpc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTasksBoundToCaller: "When an authorization context is provided,
// receivers MUST bind tasks to said context": the task of a caller that
// the authentication in front of the server named is reached by that
// caller only (on b211c63 anyone with its id reached it: Owner had to
// be set by hand).
func TestTasksBoundToCaller(t *testing.T) {
	s := taskToolServer(nil)
	defer s.Close()
	ann := intercept.WithCaller(context.Background(), &intercept.Caller{ID: "ann", Issuer: "https://as", Subject: "ann"})
	bob := intercept.WithCaller(context.Background(), &intercept.Caller{ID: "bob", Issuer: "https://as", Subject: "bob"})
	res, err := handle(s, ann, statelessTaskMessage(t, "tools/call", `"name":"quick",`), nil, nopPeer{})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*protocol.DetailedTask).TaskID
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		reach bool
	}{
		{"its caller", ann, true},
		{"another caller", bob, false},
		{"no caller", context.Background(), false},
	} {
		_, err := handle(s, tt.ctx, statelessTaskMessage(t, "tasks/get", fmt.Sprintf(`"taskId":%q,`, id)), nil, nopPeer{})
		if reached := err == nil; reached != tt.reach {
			t.Errorf("tasks/get by %s: %v, want reached %v", tt.name, err, tt.reach)
		}
	}
}

// callerCtx is the context of a request of the caller that
// an authentication in front of the server named name.
func callerCtx(name string) context.Context {
	return intercept.WithCaller(context.Background(), &intercept.Caller{ID: name, Issuer: "https://as", Subject: name})
}

// startStatelessTask calls tool as a stateless task and returns its id.
func startStatelessTask(t *testing.T, s *server.Server, ctx context.Context, tool string) (string, error) {
	t.Helper()
	res, err := handle(s, ctx, statelessTaskMessage(t, "tools/call", fmt.Sprintf(`"name":%q,`, tool)), nil, nopPeer{})
	if err != nil {
		return "", err
	}
	return res.(*protocol.DetailedTask).TaskID, nil
}

// taskStatus is the status tasks/get gives, or the error.
func taskStatus(t *testing.T, s *server.Server, ctx context.Context, id string) (string, error) {
	t.Helper()
	res, err := handle(s, ctx, statelessTaskMessage(t, "tasks/get", fmt.Sprintf(`"taskId":%q,`, id)), nil, nopPeer{})
	if err != nil {
		return "", err
	}
	return res.(*protocol.DetailedTask).Status, nil
}

// awaitFinished polls tasks/get until the task is in a terminal status:
// the task's handler ends on a goroutine of its own.
func awaitFinished(t *testing.T, s *server.Server, ctx context.Context, id string) {
	t.Helper()
	for {
		st, err := taskStatus(t, s, ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if protocol.Terminal(st) {
			return
		}
		runtime.Gosched()
	}
}

// TestTaskStoreShared: one client holds at most its share of the task
// store (a tenth by default), and makes room only by its own finished
// tasks: it neither fills the store for the others nor drops their
// unread results. On b211c63 one client filled the store (ten times its
// share here, 10,000 tasks in 7 s on the conformance server: the others
// got "too many tasks" for the tasks' hour) or, creating tasks that
// finish at once, evicted the others' results.
func TestTaskStoreShared(t *testing.T) {
	const maxTasks, share = 100, 10
	for _, tt := range []struct {
		name string
		tool string // what the flooding client runs
	}{
		{"running tasks", "wait"},
		{"finished tasks", "quick"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := taskToolServer(&server.Options{Tasks: server.TaskOptions{MaxTasks: maxTasks}})
			defer s.Close()
			ann, mallory := callerCtx("ann"), callerCtx("mallory")
			result, err := startStatelessTask(t, s, ann, "quick")
			if err != nil {
				t.Fatal(err)
			}
			awaitFinished(t, s, ann, result)
			accepted := 0
			for range 2 * maxTasks {
				id, err := startStatelessTask(t, s, mallory, tt.tool)
				if err != nil {
					continue
				}
				accepted++
				if tt.tool == "quick" {
					awaitFinished(t, s, mallory, id)
				}
			}
			if tt.tool == "wait" && accepted != share {
				t.Errorf("the flooding client started %d running tasks, want its share, %d", accepted, share)
			}
			if _, err := taskStatus(t, s, ann, result); err != nil {
				t.Errorf("the other client's unread result after the flood: %v", err)
			}
			// Ten honest clients, a few tasks each, never notice.
			for i := range 10 {
				for range 3 {
					if _, err := startStatelessTask(t, s, callerCtx(fmt.Sprint("client", i)), "wait"); err != nil {
						t.Fatalf("client %d after the flood: %v", i, err)
					}
				}
			}
		})
	}
}

// TestTaskShareByAddress: over HTTP, clients that no authorization names
// share the task store by their address (IPv6 by its /64): a flood from
// one address takes its share, and a client elsewhere is served. On
// b211c63 the flood took the whole store.
func TestTaskShareByAddress(t *testing.T) {
	const maxTasks, share = 20, 2
	s := taskToolServer(&server.Options{Tasks: server.TaskOptions{MaxTasks: maxTasks}})
	defer s.Close()
	h := streamablehandler.New(s, nil)
	defer h.Close()
	// The test's clients all dial from loopback: each says the address
	// to stand for.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = r.Header.Get("X-Test-Addr")
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	started := func(addr string, n int) int {
		t.Helper()
		c, err := client.Connect(context.Background(), &streamable.Transport{URL: ts.URL, Header: http.Header{"X-Test-Addr": {addr}}},
			&client.Options{ProtocolVersion: protocol.Version20260728})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ok := 0
		for range n {
			var task *protocol.DetailedTask
			_, err := c.Call(context.Background(), "wait", nil, client.AsTask(&client.TaskOptions{Detach: true,
				WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { task = t }}}))
			if err == nil && task != nil {
				ok++
			}
		}
		return ok
	}
	for _, tt := range []struct {
		addr         string
		try, started int
	}{
		{"192.0.2.1:1000", maxTasks, share},
		{"192.0.2.1:2000", 1, 0}, // the same host, another port
		{"192.0.2.2:1000", 1, 1},
		{"[2001:db8::1]:1000", maxTasks, share},
		{"[2001:db8::2]:1000", 1, 0}, // the same /64
		{"[2001:db8:0:1::1]:1000", 1, 1},
	} {
		if got := started(tt.addr, tt.try); got != tt.started {
			t.Errorf("%s: %d of %d tasks started, want %d", tt.addr, got, tt.try, tt.started)
		}
	}
}
