package interop

// A replica of `ferry serve` told to stop (SIGTERM) behind a real HAProxy
// loses no call: its /readyz answers 503 at once, it serves on until
// HAProxy has taken it out of rotation, then it stops and exits 0.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// cluster is a redis-server, replicas of ferry serve sharing it, and a
// balancer (HAProxy or nginx) spreading requests over them.
type cluster struct {
	sock     string      // Redis's unix socket
	replicas []*exec.Cmd // ferry serve
	urls     []string    // where each replica listens
	lb       string      // the balancer's URL
	stats    string      // HAProxy's statistics, CSV
}

// startCluster starts n replicas serving the example server, each with
// the extra arguments, behind HAProxy, and returns once HAProxy sees
// them all up.
func startCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	needBinaries(t, "haproxy")
	c := startReplicas(t, n, extra...)
	dir := t.TempDir()
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

// startReplicas starts a redis-server and n replicas sharing it, serving
// the example server, each with the extra arguments.
func startReplicas(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	needBinaries(t, "redis-server", "redis-cli")
	bin := ferryBinary(t)
	dir := t.TempDir()
	c := &cluster{sock: filepath.Join(dir, "redis.sock")}
	daemon(t, exec.Command("redis-server", "--port", "0", "--unixsocket", c.sock, "--save", "", "--appendonly", "no", "--dir", dir))
	waitFor(t, "redis-server", func() bool { _, err := os.Stat(c.sock); return err == nil })

	cfg := filepath.Join(dir, "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": exampleServer}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for range n {
		cmd, url := replica(t, bin, cfg, "unix://"+c.sock, extra...)
		c.replicas, c.urls = append(c.replicas, cmd), append(c.urls, url)
	}
	return c
}

// up returns how many replicas HAProxy sees up.
func (c *cluster) up() int {
	resp, err := http.Get(c.stats)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("# ")))).ReadAll()
	if err != nil || len(rows) == 0 {
		return 0
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	n := 0
	for _, row := range rows[1:] {
		if row[col["pxname"]] == "ferry" && strings.HasPrefix(row[col["svname"]], "r") && row[col["status"]] == "UP" {
			n++
		}
	}
	return n
}

// caller calls echo in a loop through one client until stop, counting
// the calls answered and those failed.
type caller struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []string // the first failures
}

func (k *caller) loop(ctx context.Context, c *client.Client, stop <-chan struct{}) {
	// A call every 5 ms or so, rather than as fast as can be, leaves the
	// machine's cores to the replicas' drain.
	pace := time.NewTicker(5 * time.Millisecond)
	defer pace.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-pace.C:
		}
		msg := fmt.Sprint("drain ", i)
		res, err := c.Call(ctx, "everything__echo", map[string]any{"message": msg})
		if err == nil && !res.IsError && len(res.Content) > 0 && strings.Contains(res.Content[0].Text, msg) {
			k.ok.Add(1)
			continue
		}
		k.failed.Add(1)
		k.mu.Lock()
		if len(k.errs) < 5 {
			k.errs = append(k.errs, fmt.Sprintf("%+v, %v", res, err))
		}
		k.mu.Unlock()
	}
}

// waitCalls waits until the callers have answered n more calls.
func (k *caller) waitCalls(t *testing.T, n int64) {
	t.Helper()
	want := k.ok.Load() + k.failed.Load() + n
	waitFor(t, fmt.Sprintf("%d more calls", n), func() bool { return k.ok.Load()+k.failed.Load() >= want })
}

func TestScaleOutDrainOnSIGTERM(t *testing.T) {
	// HAProxy checks every 200 ms and takes a replica out at the first
	// 503 (haproxyConfig): two seconds of notice are ample.
	cl := startCluster(t, 2, "--drain-notice", "2s", "--drain", "5s")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	inits := &countInitialize{}
	var clients []*client.Client
	for _, version := range []string{protocol.LatestLegacyVersion, protocol.LatestLegacyVersion, protocol.Version20260728, protocol.Version20260728} {
		c, err := client.Connect(ctx, &streamable.Transport{URL: cl.lb + "/mcp", Client: &http.Client{Transport: inits}},
			&client.Options{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	var k caller
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { k.loop(ctx, c, stop) })
	}
	k.waitCalls(t, 40)
	before := served(t, cl.stats)

	victim := cl.replicas[0]
	if err := victim.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// /readyz goes false first, while the replica still serves calls.
	waitFor(t, "the stopping replica's /readyz to answer 503", func() bool {
		resp, err := http.Get(cl.urls[0] + "/readyz")
		if err != nil {
			t.Fatalf("the stopping replica no longer answers /readyz: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	direct, err := client.Connect(ctx, &streamable.Transport{URL: cl.urls[0] + "/mcp"}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatalf("the draining replica refused a new client: %v", err)
	}
	if res, err := direct.Call(ctx, "everything__echo", map[string]any{"message": "draining"}); err != nil || res.IsError {
		t.Errorf("the draining replica refused a new call: %+v, %v", res, err)
	}
	direct.Close()
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the stopped replica: %v, want exit status 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stopped replica did not exit")
	}
	k.waitCalls(t, 40)
	close(stop)
	wg.Wait()

	after := served(t, cl.stats)
	t.Logf("calls answered %d, failed %d; HAProxy sent the replicas %v requests before the stop, %v in all",
		k.ok.Load(), k.failed.Load(), before, after)
	if n := k.failed.Load(); n > 0 {
		t.Errorf("%d calls failed while a replica drained, the first: %s", n, strings.Join(k.errs, "\n"))
	}
	if got := inits.n.Load(); got != 2 {
		t.Errorf("the legacy clients sent initialize %d times, want twice (once each)", got)
	}
}
