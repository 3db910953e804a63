package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// TestQuestionsDoNotCrossClients (security issue 29, finding 1): while
// client A's call on a shared stdio process waits for A's answer to the
// server's question, client B's call (B cannot answer) makes the server
// ask too. B's question must not reach A, nor A's answer B: B gets an
// error, A its own answer. On b211c63, B's question went to A (the call
// holding the link's slot), whose answer ("alice's secret") B got; a
// stateless A got it in its next round.
func TestQuestionsDoNotCrossClients(t *testing.T) {
	_, url := start(t, []*config.Server{legacyChild(t, "a")}, nil)
	endpoints := []struct{ path, tool string }{{"/mcp", "a__sample"}, {"/servers/a/mcp", "sample"}}
	for _, ep := range endpoints {
		for _, ea := range eras {
			for _, eb := range eras {
				t.Run(fmt.Sprintf("%s/A %s/B %s", ep.path, ea.name, eb.name), func(t *testing.T) {
					crossCase(t, url+ep.path, ep.tool, ea.version, eb.version)
				})
			}
		}
	}
}

// legacyChild is child(t, name) as a server of the legacy era only (it
// refuses server/discover), whose questions over stdio name no request.
func legacyChild(t *testing.T, name string) *config.Server {
	cfg := child(t, name)
	cfg.Env = map[string]string{"FERRY_GATEWAY_TEST_LEGACY_SERVER": name}
	return cfg
}

// The test binary runs as legacyChild's server (before TestMain).
func init() {
	name := os.Getenv("FERRY_GATEWAY_TEST_LEGACY_SERVER")
	if name == "" {
		return
	}
	refuseDiscover := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodDiscover {
				return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s", req.Method)
			}
			return next(ctx, req)
		}
	}
	if err := testServer(name, refuseDiscover).Run(context.Background(), stdio.ServerStream()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// askedClient is client A: it answers its own question ("alice") only
// once released, and records any other question it is asked.
type askedClient struct {
	asked   chan struct{} // closed when its own question arrives
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	strays  []string
}

func (a *askedClient) sample(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	prompt := p.Messages[0].Content[0].Text
	if prompt != "alice" {
		a.mu.Lock()
		a.strays = append(a.strays, prompt)
		a.mu.Unlock()
	} else {
		a.once.Do(func() { close(a.asked) })
		select {
		case <-a.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "m",
		Content: protocol.SamplingContent{protocol.TextContent("alice's secret")}}, nil
}

func crossCase(t *testing.T, url, tool, va, vb string) {
	ctx := ctxT(t)
	a := &askedClient{asked: make(chan struct{}), release: make(chan struct{})}
	ca := connect(t, url, va, &client.Options{Sampling: a.sample})
	cb := connect(t, url, vb, nil)
	type outcome struct {
		res *protocol.CallToolResult
		err error
	}
	aDone := make(chan outcome, 1)
	go func() {
		res, err := ca.Call(ctx, tool, map[string]string{"prompt": "alice"})
		aDone <- outcome{res, err}
	}()
	select {
	case <-a.asked:
	case <-ctx.Done():
		t.Fatal("A was not asked its own question")
	}
	// B's call is bounded so that, where its question is held for A's
	// next round (b211c63, stateless A), the test goes on to see it.
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	res, err := cb.Call(bctx, tool, map[string]string{"prompt": "bob"})
	cancel()
	close(a.release)
	switch {
	case err == nil && !res.IsError:
		t.Errorf("B, which cannot answer, got an answer: %q", res.Content[0].Text)
	case err != nil:
		t.Logf("B: %v", err)
	default:
		t.Logf("B: tool error %q", res.Content[0].Text)
	}
	out := <-aDone
	if out.err != nil || out.res.IsError || out.res.Content[0].Text != "sampled: alice's secret" {
		t.Errorf("A's own call: %+v, %v", out.res, out.err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.strays) > 0 {
		t.Errorf("A was asked another client's questions: %q", a.strays)
	}
}

// bearerClient connects to url as a client holding token.
func bearerClient(t *testing.T, url, version, token string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &streamable.Transport{URL: url, Header: http.Header{"Authorization": {"Bearer " + token}}}
	c, err := client.Connect(ctx, tr, &client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (%s): %v", url, version, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIsolatedStatelessCallers (security issue 29, finding 4): a server
// with "isolation": "session" runs a process per caller for stateless
// clients, the identity Options.Auth gives them (here the bearer token):
// two callers never share one, one caller's requests do; without a caller
// a stateless request is refused rather than served by a shared process.
// On b211c63 every stateless client shared one process.
func TestIsolatedStatelessCallers(t *testing.T) {
	cfg := child(t, "a")
	cfg.Isolation = "session"
	g, err := New([]*config.Server{cfg}, &Options{Auth: BearerTokens([]string{"alice-token", "bob-token"})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		g.Close(context.Background())
	})
	var pids []int
	for _, path := range []string{"/mcp", "/servers/a/mcp"} {
		t.Run(path, func(t *testing.T) {
			tool := "whoami"
			if path == "/mcp" {
				tool = "a__whoami"
			}
			url := ts.URL + path
			alice := bearerClient(t, url, protocol.Version20260728, "alice-token")
			alice2 := bearerClient(t, url, protocol.Version20260728, "alice-token")
			bob := bearerClient(t, url, protocol.Version20260728, "bob-token")
			pa, pa2, pb := pidOf(t, alice, tool), pidOf(t, alice2, tool), pidOf(t, bob, tool)
			if pa == pb {
				t.Errorf("two callers share the process %d of an isolated server", pa)
			}
			if pa != pa2 {
				t.Errorf("one caller's stateless requests went to processes %d and %d", pa, pa2)
			}
			legacy := bearerClient(t, url, protocol.LatestLegacyVersion, "alice-token")
			if pl := pidOf(t, legacy, tool); pl == pa || pl == pb {
				t.Errorf("a legacy session shares process %d with stateless callers", pl)
			}
			pids = append(pids, pa, pb)
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("a caller's process %d still runs after Close", pid)
		}
	}
}

// TestIsolatedStatelessWithoutCaller: without an identity for a stateless
// client, a call to an isolated server is refused with an error that says
// why, while its tools are still listed (from the process no client
// calls).
func TestIsolatedStatelessWithoutCaller(t *testing.T) {
	cfg := child(t, "a")
	cfg.Isolation = "session"
	_, url := start(t, []*config.Server{cfg}, nil)
	c := connect(t, url+"/mcp", protocol.Version20260728, nil)
	ctx := ctxT(t)
	tools, err := c.ListTools(ctx, "")
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %+v, %v", tools, err)
	}
	_, err = c.Call(ctx, "a__whoami", nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "names no caller") {
		t.Fatalf("a stateless call without a caller: %v, want a refusal naming the reason", err)
	}
}

// TestClientOptionsApplied: Options.ClientOptions adjusts the clients the
// gateway opens to its servers (on b211c63 it was never called): pinned to
// a legacy revision, the connection to a dual-era server is legacy.
func TestClientOptionsApplied(t *testing.T) {
	var called []string
	var mu sync.Mutex
	g, _ := start(t, []*config.Server{child(t, "a")}, &Options{ClientOptions: func(name string, o *client.Options) {
		mu.Lock()
		called = append(called, name)
		mu.Unlock()
		o.ProtocolVersion = protocol.LatestLegacyVersion
	}})
	if v := g.Status()["a"].Version; v != protocol.LatestLegacyVersion {
		t.Errorf("the connection to a speaks %q, want %q", v, protocol.LatestLegacyVersion)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(called) == 0 || called[0] != "a" {
		t.Errorf("ClientOptions called for %q, want a", called)
	}
}

// statelessCall posts a stateless tools/call of tool with token and
// returns the answer's body (JSON, or the data of its one SSE event).
func statelessCall(t *testing.T, url, token, tool, params string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `",` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocol.Version20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
	return string(b)
}

// TestRequestStateIsTheCallersOwn: a stateless request waiting for its
// client's answer is resumed only by the caller that started it: another
// caller's retry with its requestState (leaked, say) is told it is
// unknown, and gets neither the question nor a say in the answer; the
// caller itself then resumes it. On b211c63 anyone holding the token did.
func TestRequestStateIsTheCallersOwn(t *testing.T) {
	g, err := New([]*config.Server{child(t, "a")}, &Options{Auth: BearerTokens([]string{"alice-token", "bob-token"})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		g.Close(context.Background())
	})
	url := ts.URL + "/mcp"
	first := statelessCall(t, url, "alice-token", "a__sample", `"arguments":{"prompt":"alice's question"},`)
	var round struct {
		Result struct {
			InputRequests map[string]jsontext.Value `json:"inputRequests"`
			RequestState  string                    `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(first), &round); err != nil || round.Result.RequestState == "" || len(round.Result.InputRequests) != 1 {
		t.Fatalf("alice's first round: %s (%v)", first, err)
	}
	var key string
	for k := range round.Result.InputRequests {
		key = k
	}
	state, _ := json.Marshal(round.Result.RequestState)
	answer := func(who string) string {
		return `"arguments":{"prompt":"alice's question"},"requestState":` + string(state) +
			`,"inputResponses":{"` + key + `":{"role":"assistant","model":"m","content":{"type":"text","text":"` + who + ` answers"}}},`
	}
	if got := statelessCall(t, url, "bob-token", "a__sample", answer("bob")); !strings.Contains(got, "unknown or expired requestState") {
		t.Errorf("bob's retry with alice's requestState: %s", got)
	}
	if got := statelessCall(t, url, "alice-token", "a__sample", answer("alice")); !strings.Contains(got, "sampled: alice answers") {
		t.Errorf("alice's retry: %s", got)
	}
}
