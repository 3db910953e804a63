package interop

// Two `ferry serve` replicas behind a real HAProxy, round-robin, serving
// a server isolated per session: each replica advertises where the other
// reaches it (--advertise), so a session's requests that land on the
// replica without its process are forwarded to the one with it. The
// session keeps one process however its requests are spread; once its
// replica is killed, its next request gets 404 and the client's new
// initialize opens a session on the survivor.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

func TestScaleOutAdvertiseIsolated(t *testing.T) {
	c := startAdvertised(t, 2)
	before := []int{childrenOf(t, c.replicas[0]), childrenOf(t, c.replicas[1])}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := &notFounds{next: &countInitialize{}}
	cl, err := client.Connect(ctx, &streamable.Transport{URL: c.lb + "/mcp", Client: &http.Client{Transport: seen}},
		&client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	call := func(what string, n int) {
		t.Helper()
		for i := range n {
			res, err := cl.Call(ctx, "everything__echo", map[string]any{"message": what})
			if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, what) {
				t.Fatalf("%s, call %d: %+v, %v", what, i, res, err)
			}
		}
	}
	call("round-robin", 10)
	// Progress notifications stream through the forward as they come.
	var progress atomic.Int32
	pctx := client.WithProgress(ctx, func(*protocol.ProgressParams) { progress.Add(1) })
	res, err := cl.Call(pctx, "everything__countdown", map[string]any{"steps": 3})
	if err != nil || res.IsError {
		t.Fatalf("countdown: %+v, %v", res, err)
	}
	by := served(t, c.stats)
	t.Logf("HAProxy sent the replicas %v requests; the session streamed %d progress notifications", by, progress.Load())
	if by["r0"] < 3 || by["r1"] < 3 {
		t.Fatalf("HAProxy did not spread the session over both replicas: %v", by)
	}
	if progress.Load() != 3 {
		t.Errorf("%d progress notifications reached the client, want 3", progress.Load())
	}
	added := []int{childrenOf(t, c.replicas[0]) - before[0], childrenOf(t, c.replicas[1]) - before[1]}
	if added[0]+added[1] != 1 {
		t.Fatalf("the session started %v processes on the replicas, want one in all", added)
	}
	owner, survivor := 0, 1
	if added[1] == 1 {
		owner, survivor = 1, 0
	}

	c.replicas[owner].Process.Kill() // SIGKILL
	c.replicas[owner].Wait()
	call("after the owner died", 2)
	if got := seen.next.(*countInitialize).n.Load(); got != 2 {
		t.Errorf("the client sent initialize %d times, want twice: once more after the 404", got)
	}
	if got := seen.bodies(); len(got) != 1 || !strings.Contains(got[0], "does not answer") {
		t.Errorf("the 404s the client got: %q, want one saying the owner does not answer", got)
	}
	if n := childrenOf(t, c.replicas[survivor]) - before[survivor]; n != 1 {
		t.Errorf("the new session runs %d processes on the surviving replica, want 1", n)
	}
}

// startAdvertised starts a redis-server, n replicas isolating the example
// server per session, each listening on a port chosen first and
// advertising it, and HAProxy over them.
func startAdvertised(t *testing.T, n int) *cluster {
	t.Helper()
	needBinaries(t, "redis-server", "redis-cli", "haproxy")
	bin := ferryBinary(t)
	dir := t.TempDir()
	c := &cluster{sock: filepath.Join(dir, "redis.sock")}
	daemon(t, exec.Command("redis-server", "--port", "0", "--unixsocket", c.sock, "--save", "", "--appendonly", "no", "--dir", dir))
	waitFor(t, "redis-server", func() bool { _, err := os.Stat(c.sock); return err == nil })
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": {"command": "`+exampleServer+`", "isolation": "session"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for range n {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		cmd, url := replica(t, bin, cfg, "unix://"+c.sock, "--addr", addr, "--advertise", "http://"+addr)
		c.replicas, c.urls = append(c.replicas, cmd), append(c.urls, url)
	}
	port, statsPort := freePort(t), freePort(t)
	hcfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(hcfg, []byte(haproxyConfig(port, statsPort, c.urls)), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon(t, exec.Command("haproxy", "-db", "-f", hcfg))
	c.lb = fmt.Sprintf("http://127.0.0.1:%d", port)
	c.stats = fmt.Sprintf("http://127.0.0.1:%d/stats;csv", statsPort)
	waitFor(t, "HAProxy to see every replica ready", func() bool { return c.up() == n })
	return c
}

// childrenOf returns how many processes cmd's process has started that
// still run: from /proc, each process's parent.
func childrenOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // it ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold anything, up to the last ')'.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(cmd.Process.Pid) {
			n++
		}
	}
	return n
}

// notFounds keeps the bodies of the 404 answers a client gets.
type notFounds struct {
	next http.RoundTripper
	mu   sync.Mutex
	got  []string
}

func (f *notFounds) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := f.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusNotFound {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	f.mu.Lock()
	f.got = append(f.got, string(body))
	f.mu.Unlock()
	return resp, nil
}

func (f *notFounds) bodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}
