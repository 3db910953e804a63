package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

type echoIn struct {
	Message string `json:"message"`
}

// testServer is an in-process server with a few tools.
func testServer(name string) *server.Server {
	s := server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		return name + ": " + in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "only_" + name}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return name, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "slow"}, func(ctx context.Context, req *server.Request, in struct {
		Steps int `json:"steps"`
		Delay int `json:"delayMs"`
	}) (string, error) {
		for i := 1; i <= in.Steps; i++ {
			req.Progress(ctx, float64(i), float64(in.Steps), "")
			select {
			case <-ctx.Done():
				return "", context.Cause(ctx)
			case <-time.After(time.Duration(in.Delay) * time.Millisecond):
			}
		}
		return "done", nil
	})
	server.AddTool(s, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		<-ctx.Done()
		return "", context.Cause(ctx)
	})
	return s
}

// memHost runs in-process servers over memory pipes; crash ends a
// server's side of its current connection.
type memHost struct {
	*Host
	mu      sync.Mutex
	conns   map[string]*server.Session
	opens   map[string]int
	refuse  map[string]bool // open fails, as a command that cannot start
	servers map[string]*server.Server
}

func newMemHost(t *testing.T, cfgs []*config.Server, opts *Options) *memHost {
	t.Helper()
	m := &memHost{conns: map[string]*server.Session{}, opens: map[string]int{}, refuse: map[string]bool{}, servers: map[string]*server.Server{}}
	for _, c := range cfgs {
		m.servers[c.Name] = testServer(c.Name)
	}
	if opts == nil {
		opts = &Options{}
	}
	opts.Transport = func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.opens[s.Name]++
		if m.refuse[s.Name] {
			return nil, errors.New("cannot start")
		}
		a, b := memory.NewPipe(jsonrpc.Limits{})
		m.conns[s.Name] = m.servers[s.Name].Connect(context.Background(), a)
		return b, nil
	}
	h, err := New(cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Host = h
	t.Cleanup(func() {
		h.Close()
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, c := range m.conns {
			c.Close()
			c.Wait()
		}
	})
	return m
}

func (m *memHost) crash(name string) {
	m.mu.Lock()
	c := m.conns[name]
	m.mu.Unlock()
	c.Close()
	c.Wait()
}

func (m *memHost) openCount(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.opens[name]
}

func stdioEntry(name string) *config.Server {
	return &config.Server{Name: name, Transport: config.Stdio, Command: name}
}

func TestStartAndAggregate(t *testing.T) {
	cfgs := []*config.Server{stdioEntry("a"), stdioEntry("b"), stdioEntry("c")}
	cfgs[1].BlockedTools = []string{"slow", "blo*"}
	cfgs[2].Disabled = true
	h := newMemHost(t, cfgs, &Options{Deny: []string{"a__block"}})
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Servers() {
		st := s.Status()
		want := Ready
		if s.Name() == "c" {
			want = Disabled
		}
		if st.State != want {
			t.Errorf("%s: state %v, want %v (%v)", s.Name(), st.State, want, st.Err)
		}
		if want == Ready && (!st.Stateless || st.Version == "" || st.Info.Name != s.Name() || st.ConnectTime <= 0) {
			t.Errorf("%s: status %+v", s.Name(), st)
		}
	}
	tools, err := h.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	want := "a__echo a__only_a a__slow b__echo b__only_b"
	if strings.Join(names, " ") != want {
		t.Errorf("tools %v, want %s", names, want)
	}
	res, err := h.Call(t.Context(), "b__echo", map[string]any{"message": "hi"})
	if err != nil || res.Content[0].Text != "b: hi" {
		t.Fatalf("call: %v %+v", err, res)
	}
	_, err = h.Call(t.Context(), "a__block", nil)
	if KindOf(err) != KindUnknown {
		t.Errorf("denied tool: %v", err)
	}
	b, _ := h.Server("b")
	_, err = b.CallTool(t.Context(), &protocol.CallToolParams{Name: "block"})
	if KindOf(err) != KindNotAllowed {
		t.Errorf("blocked tool: %v", err)
	}
	c, _ := h.Server("c")
	if _, err := c.Client(t.Context()); KindOf(err) != KindDisabled {
		t.Errorf("disabled server: %v", err)
	}
	if _, err := h.Server("zz"); KindOf(err) != KindUnknown {
		t.Errorf("unknown server: %v", err)
	}
}

func TestConfigErrorAndStartFailure(t *testing.T) {
	bad := stdioEntry("bad")
	bad.Err = &config.Error{File: "f.json", Server: "bad", Key: "env.X", Err: &config.MissingVarError{Name: "X"}}
	cfgs := []*config.Server{stdioEntry("ok"), bad, stdioEntry("nostart")}
	h := newMemHost(t, cfgs, &Options{Restart: Backoff{Disable: true}})
	h.refuse["nostart"] = true
	err := h.Start(t.Context())
	if err == nil {
		t.Fatal("Start succeeded")
	}
	s, _ := h.Server("bad")
	if st := s.Status(); st.State != Failed || KindOf(st.Err) != KindConfig || config.MissingVar(st.Err) != "X" {
		t.Errorf("bad: %+v", st)
	}
	s, _ = h.Server("nostart")
	if st := s.Status(); st.State != Failed || KindOf(st.Err) != KindUnreachable || !strings.Contains(st.Err.Error(), "cannot start") {
		t.Errorf("nostart: %+v", st)
	}
	if !strings.Contains(err.Error(), `server "nostart": cannot start`) || !strings.Contains(err.Error(), "variable X is not set") {
		t.Errorf("Start error: %v", err)
	}
	tools, _ := h.Tools(t.Context())
	if len(tools) != 4 {
		t.Errorf("the working server's tools: %d", len(tools))
	}
}

func TestAggregate(t *testing.T) {
	tool := func(names ...string) []protocol.Tool {
		var out []protocol.Tool
		for _, n := range names {
			out = append(out, protocol.Tool{Name: n})
		}
		return out
	}
	long := strings.Repeat("x", 70)
	tests := []struct {
		mode    PrefixMode
		sep     string
		servers []string
		lists   [][]protocol.Tool
		want    string
	}{
		{PrefixAlways, "__", []string{"fs", "mem"}, [][]protocol.Tool{tool("read", "write"), tool("read")},
			"fs__read fs__write mem__read"},
		{PrefixOnConflict, "__", []string{"fs", "mem"}, [][]protocol.Tool{tool("read", "write"), tool("read")},
			"fs__read write mem__read"},
		{PrefixNever, "__", []string{"fs", "mem"}, [][]protocol.Tool{tool("read", "write"), tool("read", "x")},
			"read write x"},
		{PrefixAlways, "-", []string{"my server", "b.c"}, [][]protocol.Tool{tool("get.item"), tool("a/b")},
			"my_server-get_item b_c-a_b"},
		{PrefixNever, "_", []string{"s"}, [][]protocol.Tool{tool("a.b", "a_b", "")},
			"a_b _"},
		{PrefixOnConflict, "_", []string{"s"}, [][]protocol.Tool{tool("a.b", "a_b")},
			"a_b a_b-45958e64"},
		{PrefixAlways, "__", []string{"srv"}, [][]protocol.Tool{tool(long)},
			"srv__" + strings.Repeat("x", 50) + "-108c4016"},
	}
	for i, tt := range tests {
		got := Aggregate(tt.servers, tt.lists, tt.sep, tt.mode)
		var names []string
		for _, g := range got {
			names = append(names, g.Name)
			if len(g.Name) > 64 || !validName(g.Name) || g.Name == "" {
				t.Errorf("%d: invalid name %q", i, g.Name)
			}
		}
		if strings.Join(names, " ") != tt.want {
			t.Errorf("%d (%s): %v, want %s", i, tt.mode, names, tt.want)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	if _, err := New(nil, &Options{Separator: "."}); err == nil {
		t.Error("separator '.' accepted")
	}
	if _, err := New(nil, &Options{Prefix: "sometimes"}); err == nil {
		t.Error("prefix mode accepted")
	}
}

func TestListChangedRefreshesTools(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		testListChanged(t, &Options{Client: func(string) *client.Options {
			return &client.Options{ProtocolVersion: protocol.LatestLegacyVersion}
		}})
	})
	t.Run("stateless", func(t *testing.T) { testListChanged(t, &Options{WatchTools: true}) })
}

func testListChanged(t *testing.T, opts *Options) {
	h := newMemHost(t, []*config.Server{stdioEntry("a")}, opts)
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, _ := h.Server("a")
	before, _ := s.Tools(t.Context())
	server.AddTool(h.servers["a"], &protocol.Tool{Name: "added"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "", nil
	})
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		after, _ := s.Tools(t.Context())
		if len(after) == len(before)+1 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Error("the tool list did not change after notifications/tools/list_changed")
}

func TestTrace(t *testing.T) {
	var mu sync.Mutex
	var events []*TraceEvent
	h := newMemHost(t, []*config.Server{stdioEntry("a")}, &Options{Trace: func(e *TraceEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(t.Context(), "a__echo", map[string]string{"message": "x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var lines []string
	for _, e := range events {
		dir := "<-"
		if e.Out {
			dir = "->"
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %s", dir, e.Kind, e.ID, e.Method))
		if e.Server != "a" || e.Size != len(e.Message) || e.Size == 0 {
			t.Errorf("event %+v", e)
		}
		if e.Kind == "response" && e.Latency <= 0 {
			t.Errorf("response without latency: %+v", e)
		}
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"-> request 1 server/discover", "<- response 1 server/discover", "-> request 2 tools/list",
		"<- response 2 tools/list", "-> request 3 tools/call", "<- response 3 tools/call"} {
		if !strings.Contains(got, want) {
			t.Errorf("trace lacks %q:\n%s", want, got)
		}
	}
}
