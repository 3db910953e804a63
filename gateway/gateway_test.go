package gateway

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// eras are the protocol revisions the tests' clients speak.
var eras = []struct{ name, version string }{
	{"legacy", protocol.LatestLegacyVersion},
	{"stateless", protocol.Version20260728},
}

// child is a configuration entry that runs the test binary as the
// upstream server name.
func child(t *testing.T, name string) *config.Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &config.Server{Name: name, Transport: config.Stdio, Command: exe,
		Env: map[string]string{"FERRY_GATEWAY_TEST_SERVER": name}}
}

// start runs a gateway for servers on a loopback HTTP server and waits
// until every server is connected.
func start(t *testing.T, servers []*config.Server, opts *Options) (*Gateway, string) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Host.Restart.Initial == 0 {
		opts.Host.Restart.Initial = 50 * time.Millisecond
	}
	g, err := New(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := g.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return g, ts.URL
}

// connect opens a client to url in the given revision.
func connect(t *testing.T, url, version string, opts *client.Options) *client.Client {
	t.Helper()
	o := client.Options{}
	if opts != nil {
		o = *opts
	}
	o.ProtocolVersion = version
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &streamable.Transport{URL: url}, &o)
	if err != nil {
		t.Fatalf("connect %s (%s): %v", url, version, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// text returns a function that checks a tool call and returns its text.
func text(t *testing.T) func(res *protocol.CallToolResult, err error) string {
	return func(res *protocol.CallToolResult, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("tool failed: %+v", res)
		}
		return res.Content[0].Text
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAggregatedAndOwnEndpoints(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a"), child(t, "b")}, nil)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, url+"/mcp", era.version, nil)
			tools, err := client.Collect(c.Tools(ctx))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"a__echo", "b__echo", "a__whoami", "b__sample"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools %v lack %s", names, want)
				}
			}
			if got := text(t)(c.Call(ctx, "b__whoami", nil)); !strings.HasPrefix(got, "b ") {
				t.Errorf("b__whoami = %q", got)
			}
			if got := text(t)(c.Call(ctx, "a__echo", map[string]string{"message": "hi"})); got != "hi" {
				t.Errorf("a__echo = %q", got)
			}
			p, err := c.GetPrompt(ctx, "b__greet", map[string]string{"who": "you"})
			if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.Text != "hello you" {
				t.Errorf("b__greet: %+v %v", p, err)
			}
			comp, err := c.Complete(ctx, &protocol.CompleteParams{Ref: protocol.CompleteRef{Type: protocol.RefPrompt, Name: "a__greet"},
				Argument: protocol.CompleteArgument{Name: "who", Value: "x"}})
			if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != "x-a" {
				t.Errorf("complete a__greet: %+v %v", comp, err)
			}
			r, err := c.ReadResource(ctx, "test://b/items/7")
			if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "item 7" {
				t.Errorf("read test://b/items/7: %+v %v", r, err)
			}
			r, err = c.ReadResource(ctx, "test://a/version")
			if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "0" {
				t.Errorf("read test://a/version: %+v %v", r, err)
			}
			if _, err := c.Call(ctx, "c__echo", nil); err == nil {
				t.Error("an unknown tool did not fail")
			}

			own := connect(t, url+"/servers/a/mcp", era.version, nil)
			if got := text(t)(own.Call(ctx, "whoami", nil)); !strings.HasPrefix(got, "a ") {
				t.Errorf("whoami on /servers/a = %q", got)
			}
			tools, err = client.Collect(own.Tools(ctx))
			if err != nil || len(tools) == 0 || tools[0].Name != "bump" {
				t.Errorf("tools on /servers/a: %v %v", tools, err)
			}
		})
	}
}

func TestSSEEndpoints(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	ctx := ctxT(t)
	for _, path := range []string{"/sse", "/servers/a/sse"} {
		c, err := client.Connect(ctx, &sse.Transport{URL: url + path}, &client.Options{ProtocolVersion: protocol.Version20241105})
		if err != nil {
			t.Fatal(err)
		}
		name := "a__echo"
		if path != "/sse" {
			name = "echo"
		}
		if got := text(t)(c.Call(ctx, name, map[string]string{"message": "over sse"})); got != "over sse" {
			t.Errorf("%s: %q", path, got)
		}
		c.Close()
	}
}

// Clients sharing one process get their own answers only: the gateway
// gives every request an id of its own upstream.
func TestSharedProcessOwnAnswers(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	ctx := ctxT(t)
	const clients, calls = 8, 50
	var pids sync.Map
	var wg sync.WaitGroup
	for i := range clients {
		era := eras[i%2]
		c := connect(t, url+"/mcp", era.version, nil)
		wg.Go(func() {
			pid := text(t)(c.Call(ctx, "a__whoami", nil))
			pids.Store(pid, true)
			for j := range calls {
				msg := fmt.Sprintf("client %d call %d %s", i, j, strings.Repeat("x", j*37))
				res, err := c.Call(ctx, "a__echo", map[string]string{"message": msg})
				if err != nil {
					t.Error(err)
					return
				}
				if got := res.Content[0].Text; got != msg {
					t.Errorf("client %d got %q, want %q", i, got, msg)
					return
				}
			}
		})
	}
	wg.Wait()
	n := 0
	pids.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d processes served the clients, want one shared", n)
	}
}

// A server's question goes to the client whose request caused it, in both
// eras, even when two clients that can answer share one process.
func TestSamplingRoutedToItsClient(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			var wg sync.WaitGroup
			for _, who := range []string{"alice", "bob"} {
				c := connect(t, url+"/mcp", era.version, &client.Options{
					Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
						return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "m",
							Content: protocol.SamplingContent{protocol.TextContent(who + " answers " + p.Messages[0].Content[0].Text)}}, nil
					},
				})
				wg.Go(func() {
					for i := range 5 {
						prompt := fmt.Sprintf("%s-%d", who, i)
						got := text(t)(c.Call(ctx, "a__sample", map[string]string{"prompt": prompt}))
						if want := "sampled: " + who + " answers " + prompt; got != want {
							t.Errorf("got %q, want %q", got, want)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// A process that dies fails the requests in flight at once, and is
// started again.
func TestKilledProcessFailsAtOnceAndRestarts(t *testing.T) {
	g, url := start(t, []*config.Server{child(t, "a")}, nil)
	ctx := ctxT(t)
	c := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	var pid int
	fmt.Sscanf(text(t)(c.Call(ctx, "a__whoami", nil)), "a %d", &pid)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "a__sleep", map[string]int{"ms": 60000})
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the call in flight succeeded")
		}
		if d := time.Since(killed); d > 2*time.Second {
			t.Errorf("the call failed %v after the kill", d)
		}
		t.Logf("call in flight: %v (%v after the kill)", err, time.Since(killed).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight did not fail")
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := c.Call(ctx, "a__whoami", nil)
		if err == nil && !res.IsError {
			var again int
			fmt.Sscanf(res.Content[0].Text, "a %d", &again)
			if again == pid || again == 0 {
				t.Fatalf("whoami after restart = %q", res.Content[0].Text)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := g.Status()["a"]; st.Restarts < 1 || st.State != host.Ready {
		t.Errorf("status after restart: %+v", st)
	}
}

// alive reports whether a process runs.
func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func pidOf(t *testing.T, c *client.Client, tool string) int {
	t.Helper()
	var name string
	var pid int
	fmt.Sscanf(text(t)(c.Call(ctxT(t), tool, nil)), "%s %d", &name, &pid)
	if pid == 0 {
		t.Fatalf("%s gave no process id", tool)
	}
	return pid
}

// A server with "isolation": "session" runs a process per legacy session,
// stopped when the session ends (stateless clients: see
// TestIsolatedStatelessCallers).
func TestIsolatedSessions(t *testing.T) {
	cfg := child(t, "a")
	cfg.Isolation = "session"
	g, url := start(t, []*config.Server{cfg, child(t, "b")}, nil)
	c1 := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	c2 := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	p1, p2 := pidOf(t, c1, "a__whoami"), pidOf(t, c2, "a__whoami")
	if p1 == p2 {
		t.Errorf("sessions share process %d", p1)
	}
	if pidOf(t, c1, "a__whoami") != p1 {
		t.Error("a session's process changed between calls")
	}
	if b1, b2 := pidOf(t, c1, "b__whoami"), pidOf(t, c2, "b__whoami"); b1 != b2 {
		t.Errorf("a shared server ran two processes: %d %d", b1, b2)
	}
	c1.Close() // ends the session (DELETE)
	deadline := time.Now().Add(10 * time.Second)
	for alive(p1) {
		if time.Now().After(deadline) {
			t.Fatalf("the process of an ended session (%d) still runs", p1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !alive(p2) {
		t.Error("the other session's process stopped too")
	}
	// The process ends before the gateway's bookkeeping notes it.
	for n := g.children.count(); n != 1; n = g.children.count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d session processes counted, want 1", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Session processes idle for too long are stopped; so is every process
// when the gateway closes.
func TestIdleSessionAndShutdownLeaveNothing(t *testing.T) {
	cfg := child(t, "a")
	cfg.Isolation = "session"
	g, err := New([]*config.Server{cfg, child(t, "b")}, &Options{SessionIdle: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		g.Close(context.Background())
	})
	ctx := ctxT(t)
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	idle := connect(t, ts.URL+"/mcp", protocol.LatestLegacyVersion, nil)
	pIdle := pidOf(t, idle, "a__whoami")
	deadline := time.Now().Add(10 * time.Second)
	for alive(pIdle) {
		if time.Now().After(deadline) {
			t.Fatal("an idle session's process still runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := pidOf(t, idle, "a__whoami"); got == pIdle {
		t.Error("the idle session did not get a new process")
	}
	var pids []int
	for range 3 {
		c := connect(t, ts.URL+"/mcp", protocol.LatestLegacyVersion, nil)
		pids = append(pids, pidOf(t, c, "a__whoami"), pidOf(t, c, "b__whoami"))
	}
	s := connect(t, ts.URL+"/mcp", protocol.Version20260728, nil)
	pids = append(pids, pidOf(t, s, "b__whoami"))
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := g.Close(cctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
}

func TestProgressAndLogLevels(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	ctx := ctxT(t)
	type got struct {
		mu   sync.Mutex
		logs []string
	}
	var quiet, chatty got
	logTo := func(g *got) func(p *protocol.LoggingMessageParams) {
		return func(p *protocol.LoggingMessageParams) {
			g.mu.Lock()
			g.logs = append(g.logs, string(p.Level))
			g.mu.Unlock()
		}
	}
	cq := connect(t, url+"/mcp", protocol.LatestLegacyVersion, &client.Options{OnLog: logTo(&quiet), LogLevel: protocol.LevelError})
	connect(t, url+"/mcp", protocol.LatestLegacyVersion, &client.Options{OnLog: logTo(&chatty), LogLevel: protocol.LevelDebug})
	for _, era := range eras {
		c := connect(t, url+"/mcp", era.version, nil)
		var progress []float64
		var mu sync.Mutex
		pctx := client.WithProgress(ctx, func(p *protocol.ProgressParams) {
			mu.Lock()
			progress = append(progress, p.Progress)
			mu.Unlock()
		})
		if got := text(t)(c.Call(pctx, "a__progress", nil)); got != "done" {
			t.Fatalf("progress tool: %q", got)
		}
		mu.Lock()
		if !slices.Equal(progress, []float64{1, 2, 3}) {
			t.Errorf("%s: progress %v, want 1 2 3", era.name, progress)
		}
		mu.Unlock()
	}
	text(t)(cq.Call(ctx, "a__progress", nil))
	deadline := time.Now().Add(5 * time.Second)
	for {
		quiet.mu.Lock()
		chatty.mu.Lock()
		q, c := slices.Clone(quiet.logs), slices.Clone(chatty.logs)
		quiet.mu.Unlock()
		chatty.mu.Unlock()
		if slices.Contains(c, "info") && slices.Contains(q, "error") || time.Now().After(deadline) {
			if slices.Contains(q, "info") || !slices.Contains(q, "error") {
				t.Errorf("the client at level error got %v", q)
			}
			if !slices.Contains(c, "info") || !slices.Contains(c, "error") {
				t.Errorf("the client at level debug got %v", c)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An upstream's list change reaches every client, in both eras.
func TestListChangesReachEveryClient(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	ctx := ctxT(t)
	legacyChanged := make(chan string, 10)
	statelessChanged := make(chan string, 10)
	cl := connect(t, url+"/mcp", protocol.LatestLegacyVersion, &client.Options{OnListChanged: func(m string) { legacyChanged <- m }})
	cs := connect(t, url+"/mcp", protocol.Version20260728, &client.Options{OnListChanged: func(m string) { statelessChanged <- m }})
	sub, err := cs.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	text(t)(cl.Call(ctx, "a__grow", nil))
	for name, ch := range map[string]chan string{"legacy": legacyChanged, "stateless": statelessChanged} {
		select {
		case m := <-ch:
			if m != protocol.NotificationToolsListChanged {
				t.Errorf("%s: %s", name, m)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s client got no list change", name)
		}
	}
	if got := text(t)(cs.Call(ctx, "a__grown", nil)); got != "grown" {
		t.Errorf("a__grown = %q", got)
	}
}

// Resource subscriptions pass through in both eras.
func TestResourceSubscriptions(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a"), child(t, "b")}, nil)
	ctx := ctxT(t)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			updated := make(chan string, 10)
			c := connect(t, url+"/mcp", era.version, &client.Options{OnResourceUpdated: func(uri string) { updated <- uri }})
			unsub, err := c.Subscribe(ctx, "test://b/version")
			if err != nil {
				t.Fatal(err)
			}
			text(t)(c.Call(ctx, "b__bump", nil))
			select {
			case uri := <-updated:
				if uri != "test://b/version" {
					t.Errorf("update of %s", uri)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no update")
			}
			if err := unsub(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a"), child(t, "b")}, &Options{PageSize: 3})
	ctx := ctxT(t)
	c := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	first, err := c.ListTools(ctx, "")
	if err != nil || len(first.Tools) != 3 || first.NextCursor == "" {
		t.Fatalf("first page: %d tools, cursor %q, %v", len(first.Tools), first.NextCursor, err)
	}
	all, err := client.Collect(c.Tools(ctx))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tl := range all {
		if seen[tl.Name] {
			t.Errorf("%s listed twice", tl.Name)
		}
		seen[tl.Name] = true
	}
	if len(all) != 2*7 {
		t.Errorf("%d tools over every page, want 14", len(all))
	}
	if _, err := c.ListTools(ctx, "bogus!"); err == nil {
		t.Error("an invalid cursor was accepted")
	}
}

// Update adds and removes servers without touching the others' sessions.
func TestUpdateAddsAndRemovesServers(t *testing.T) {
	g, url := start(t, []*config.Server{child(t, "a"), child(t, "b")}, nil)
	ctx := ctxT(t)
	changed := make(chan string, 10)
	c := connect(t, url+"/mcp", protocol.LatestLegacyVersion, &client.Options{OnListChanged: func(m string) { changed <- m }})
	ownA := connect(t, url+"/servers/a/mcp", protocol.LatestLegacyVersion, nil)
	pidA := pidOf(t, c, "a__whoami")
	if err := g.Update([]*config.Server{child(t, "a"), child(t, "c")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list change after the update")
	}
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if got := text(t)(c.Call(ctx, "c__echo", map[string]string{"message": "new"})); got != "new" {
		t.Errorf("c__echo = %q", got)
	}
	if _, err := c.Call(ctx, "b__echo", map[string]string{"message": "gone"}); err == nil {
		t.Error("a removed server's tool still answers")
	}
	if pidOf(t, c, "a__whoami") != pidA || pidOf(t, ownA, "whoami") != pidA {
		t.Error("the kept server was restarted")
	}
	if resp, err := httpGet(url + "/servers/b/mcp"); err != nil || resp != 404 {
		t.Errorf("GET /servers/b/mcp: %d %v, want 404", resp, err)
	}
}

func httpGet(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// remote serves testServer(name) over Streamable HTTP, stateless only when
// stateless is set, recording the Authorization headers it gets.
func remote(t *testing.T, name string, stateless bool) (*config.Server, *[]string) {
	var mu sync.Mutex
	var auth []string
	h := streamablehandler.New(testServer(name), &streamablehandler.Options{DisableSessions: stateless})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &config.Server{Name: name, Transport: config.HTTP, URL: ts.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer upstream-credential"}}, &auth
}

// Each side is spoken to in its own era: a legacy client uses a stateless
// server, a stateless client a legacy one, questions included.
func TestEraTranslation(t *testing.T) {
	stateless, _ := remote(t, "s", true)
	_, url := start(t, []*config.Server{stateless, child(t, "l")}, nil)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, url+"/mcp", era.version, &client.Options{
				Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "m",
						Content: protocol.SamplingContent{protocol.TextContent(era.name + " client")}}, nil
				},
			})
			for _, tool := range []string{"s__sample", "l__sample"} {
				if got := text(t)(c.Call(ctx, tool, map[string]string{"prompt": "p"})); got != "sampled: "+era.name+" client" {
					t.Errorf("%s: %q", tool, got)
				}
			}
		})
	}
}

// A client's token stays at the gateway: the server behind it gets the
// credentials of its configuration entry.
func TestBearerTokensAndNoPassthrough(t *testing.T) {
	up, seen := remote(t, "r", false)
	_, url := start(t, []*config.Server{up}, &Options{Auth: BearerTokens([]string{"client-secret", "other"})})
	for _, tc := range []struct {
		header string
		code   int
	}{{"", 401}, {"Bearer wrong", 401}, {"Basic client-secret", 401}} {
		req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{}`))
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("%q: %d %q", tc.header, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if code, _ := httpGet(url + "/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	ctx := ctxT(t)
	c, err := client.Connect(ctx, &streamable.Transport{URL: url + "/mcp", Header: http.Header{"Authorization": {"Bearer client-secret"}}},
		&client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := text(t)(c.Call(ctx, "r__echo", map[string]string{"message": "m"})); got != "m" {
		t.Errorf("r__echo = %q", got)
	}
	for _, a := range *seen {
		if a != "Bearer upstream-credential" {
			t.Errorf("the upstream server got Authorization %q", a)
		}
	}
}

// Many clients at once, in both eras, over one shared process: every echo
// comes back to the client that sent it.
func TestManyConcurrentClients(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, &Options{HTTP: streamablehandler.Options{MaxSessions: 1000}})
	const clients = 200
	ctx := ctxT(t)
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var calls sync.Map
	for i := range clients {
		c := connect(t, url+"/mcp", eras[i%2].version, nil)
		wg.Go(func() {
			n := 0
			for ; time.Now().Before(stop) || n == 0; n++ {
				msg := fmt.Sprintf("client %d message %d", i, n)
				res, err := c.Call(ctx, "a__echo", map[string]string{"message": msg})
				if err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				if got := res.Content[0].Text; got != msg {
					t.Errorf("client %d got %q, want %q", i, got, msg)
					return
				}
			}
			calls.Store(i, n)
		})
	}
	wg.Wait()
	total := 0
	calls.Range(func(_, v any) bool { total += v.(int); return true })
	t.Logf("%d clients, %d echoes checked", clients, total)
}

// Serve stops in order: the request in flight finishes, then sessions end
// and the processes exit; nothing is left running.
func TestServeDrainsThenStops(t *testing.T) {
	g, err := New([]*config.Server{child(t, "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln, &ServeOptions{Drain: 5 * time.Second}) }()
	url := "http://" + ln.Addr().String()
	c := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	pid := pidOf(t, c, "a__whoami")
	slow := make(chan string, 1)
	go func() {
		res, err := c.Call(context.Background(), "a__sleep", map[string]int{"ms": 700})
		if err != nil {
			slow <- err.Error()
			return
		}
		slow <- res.Content[0].Text
	}()
	time.Sleep(200 * time.Millisecond)
	stop()
	if got := <-slow; got != "slept" {
		t.Errorf("the request in flight at the stop got %q", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
	}
	if alive(pid) {
		t.Errorf("process %d still runs after Serve returned", pid)
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("still accepting connections")
	}
}

// A client's cancellation reaches the server, in both eras.
func TestCancellationPassesThrough(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	for i, era := range eras {
		c := connect(t, url+"/mcp", era.version, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.Call(ctx, "a__sleep", map[string]int{"ms": 60000})
			errc <- err
		}()
		time.Sleep(200 * time.Millisecond)
		cancel()
		if err := <-errc; err == nil {
			t.Fatalf("%s: the cancelled call succeeded", era.name)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := text(t)(c.Call(context.Background(), "a__sleep", map[string]int{"ms": -1}))
			if got == fmt.Sprint(i+1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the server saw %s cancellations, want %d", era.name, got, i+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// The HTTP transports' protections against DNS rebinding hold on every
// endpoint.
func TestOriginAndHostChecks(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, nil)
	for _, path := range []string{"/mcp", "/servers/a/mcp", "/sse"} {
		for _, h := range []struct{ name, value string }{{"Origin", "http://evil.example"}, {"Host", "evil.example"}} {
			method := "POST"
			if path == "/sse" {
				method = "GET"
			}
			req, _ := http.NewRequest(method, url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if h.name == "Host" {
				req.Host = h.value
			} else {
				req.Header.Set(h.name, h.value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s with %s: %s, want 403", method, path, h.name, resp.Status)
			}
		}
	}
}

// A session is its caller's: its id with another caller's token is
// refused as unknown (404), whatever the method (POST, GET, DELETE), and
// leaves the session alone; with its caller's token it works.
func TestSessionBoundToCaller(t *testing.T) {
	up, _ := remote(t, "r", false)
	_, url := start(t, []*config.Server{up}, &Options{Auth: BearerTokens([]string{"alice-token", "bob-token"})})
	do := func(method, endpoint, token, session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url+endpoint, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", protocol.LatestLegacyVersion)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, endpoint := range []string{"/mcp", "/servers/r/mcp"} {
		code, sess := do("POST", endpoint, "alice-token", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+
			protocol.LatestLegacyVersion+`","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`)
		if code != 200 || sess == "" {
			t.Fatalf("%s: initialize: %d, session %q", endpoint, code, sess)
		}
		for _, method := range []string{"POST", "GET", "DELETE"} {
			if code, _ := do(method, endpoint, "bob-token", sess, ping); code != http.StatusNotFound {
				t.Errorf("%s: %s with alice's session and bob's token: %d, want 404", endpoint, method, code)
			}
		}
		if code, _ := do("POST", endpoint, "alice-token", sess, ping); code != 200 {
			t.Errorf("%s: alice's own session: %d", endpoint, code)
		}
	}
}

// An HTTP+SSE session is its caller's too: a POST to its message
// endpoint with another caller's token gets 404.
func TestSSESessionBoundToCaller(t *testing.T) {
	up, _ := remote(t, "r", false)
	_, url := start(t, []*config.Server{up}, &Options{Auth: BearerTokens([]string{"alice-token", "bob-token"})})
	for _, base := range []string{"", "/servers/r"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", url+base+"/sse", nil)
		req.Header.Set("Authorization", "Bearer alice-token")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		endpoint := ""
		for endpoint == "" && sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				endpoint = d
			}
		}
		if !strings.Contains(endpoint, "sessionId=") {
			t.Fatalf("%s: no endpoint event (%q)", base, endpoint)
		}
		post := func(token string) int {
			r, _ := http.NewRequest("POST", url+endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`))
			r.Header.Set("Authorization", "Bearer "+token)
			r.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		if code := post("bob-token"); code != http.StatusNotFound {
			t.Errorf("%s: bob's POST to alice's SSE session: %d, want 404", base, code)
		}
		if code := post("alice-token"); code != http.StatusAccepted {
			t.Errorf("%s: alice's POST to her SSE session: %d, want 202", base, code)
		}
		cancel()
		resp.Body.Close()
	}
}

// countingRecycler is a stdio upstream that counts the answers given back
// to it (jsonrpc.Recycler); embedding keeps the stream's other methods.
type countingRecycler struct {
	*stdio.ClientStream
	n *atomic.Int64
}

func (s countingRecycler) Recycle(m *jsonrpc.Message) {
	if m.Buffer != nil {
		s.n.Add(1)
	}
	s.ClientStream.Recycle(m)
}

// Large answers of a stdio upstream are passed on in memory the reader
// lends, and given back once written to their clients: with 16 clients
// at once, each echo of 64 KiB (a different one every call) comes back
// whole, whatever the others' answers are read into, and (under the race
// detector) no answer is read while the reader writes another into its
// memory. Stateless clients' answers, which are not lent, go alongside.
func TestLargeAnswersLentAndGivenBack(t *testing.T) {
	var given atomic.Int64
	cfg := child(t, "a")
	_, url := start(t, []*config.Server{cfg}, &Options{Prefix: "never", Host: host.Options{
		Transport: func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			cs, err := (&stdio.Command{Path: s.Command, Env: s.Env}).Connect(ctx)
			if err != nil {
				return nil, err
			}
			return countingRecycler{cs, &given}, nil
		},
	}})
	ctx := ctxT(t)
	const clients, calls = 16, 12
	var wg sync.WaitGroup
	for i := range clients {
		era := eras[0]
		if i%4 == 3 {
			era = eras[1]
		}
		c := connect(t, url+"/mcp", era.version, nil)
		wg.Go(func() {
			for n := range calls {
				head := fmt.Sprintf("client %d call %d ", i, n)
				msg := head + strings.Repeat(string(rune('a'+(i+n)%26)), 64<<10-len(head))
				res, err := c.Call(ctx, "echo", map[string]string{"message": msg})
				if err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				if got := res.Content[0].Text; got != msg {
					t.Errorf("client %d call %d: got %d bytes starting %q, want %d starting %q", i, n, len(got), got[:min(len(got), 30)], len(msg), head)
					return
				}
			}
		})
	}
	wg.Wait()
	// The legacy clients' answers went back to the reader, every one.
	if got, want := given.Load(), int64(clients-clients/4)*calls; got != want {
		t.Errorf("%d answers given back to the upstream's reader, want %d", got, want)
	}
}
