package interop

// Tasks across two `ferry serve` replicas sharing a real redis-server,
// behind a real HAProxy, in front of server-everything (whose
// simulate-research-query runs only as a task, for about four seconds): a
// task made through one replica is read, and its result fetched, through
// the other; a task whose replica was SIGKILLed is failed, saying so,
// within 30 seconds.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// everythingCluster is startCluster's, with server-everything behind
// each replica.
func everythingCluster(t *testing.T, n int) *cluster {
	t.Helper()
	needBinaries(t, "redis-server", "redis-cli", "haproxy")
	requireNode(t)
	bin := ferryBinary(t)
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	dir := t.TempDir()
	c := &cluster{sock: filepath.Join(dir, "redis.sock")}
	daemon(t, exec.Command("redis-server", "--port", "0", "--unixsocket", c.sock, "--save", "", "--appendonly", "no", "--dir", dir))
	waitFor(t, "redis-server", func() bool { _, err := os.Stat(c.sock); return err == nil })
	cfg := filepath.Join(dir, "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for range n {
		cmd, url := replica(t, bin, cfg, "unix://"+c.sock)
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

// startResearch makes a research task through url and returns its id.
func startResearch(t *testing.T, ctx context.Context, url, version, topic string) (*client.Client, string) {
	t.Helper()
	c, err := client.Connect(ctx, &streamable.Transport{URL: url + "/mcp"}, &client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var id string
	_, err = c.Call(ctx, "everything__simulate-research-query", map[string]any{"topic": topic},
		client.AsTask(&client.TaskOptions{Detach: true, WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { id = t.TaskID }}}))
	if err != nil || id == "" {
		t.Fatalf("%s: made no task: %v", version, err)
	}
	return c, id
}

func TestScaleOutTasks(t *testing.T) {
	c := everythingCluster(t, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	wait := &client.WaitOptions{PollInterval: 200 * time.Millisecond}

	// Stateless: made on the first replica, read and fetched through the
	// second.
	_, id := startResearch(t, ctx, c.urls[0], protocol.Version20260728, "replica one")
	other, err := client.Connect(ctx, &streamable.Transport{URL: c.urls[1] + "/mcp"}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if st, err := other.GetTask(ctx, id); err != nil || protocol.Terminal(st.Status) {
		t.Fatalf("the other replica reads the task: %+v, %v", st, err)
	}
	res, err := other.WaitTask(ctx, id, wait)
	if err != nil || !strings.HasPrefix(res.Content[0].Text, "# Research Report: replica one") {
		t.Fatalf("the result through the other replica: %+v, %v", res, err)
	}

	// Legacy: one session through HAProxy, each request to the next
	// replica; tasks/result may wait on either.
	lc, lid := startResearch(t, ctx, c.lb, protocol.LatestLegacyVersion, "round robin")
	res, err = lc.WaitTask(ctx, lid, wait)
	if err != nil || !strings.HasPrefix(res.Content[0].Text, "# Research Report: round robin") {
		t.Fatalf("legacy through HAProxy: %+v, %v", res, err)
	}
	listed, err := lc.ListTasks(ctx, "")
	if err != nil || len(listed.Tasks) != 1 || listed.Tasks[0].TaskID != lid {
		t.Errorf("tasks/list through HAProxy: %+v, %v", listed, err)
	}

	// The replica running a task is SIGKILLed: the other fails the task,
	// saying so, within 30 seconds.
	_, dead := startResearch(t, ctx, c.urls[0], protocol.Version20260728, "killed")
	c.replicas[0].Process.Kill()
	c.replicas[0].Wait()
	killed := time.Now()
	var st *protocol.DetailedTask
	for {
		if st, err = other.GetTask(ctx, dead); err != nil || st.Status != protocol.TaskWorking {
			break
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("the task of the killed replica still works %v later", time.Since(killed))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || st.Status != protocol.TaskFailed || !strings.Contains(st.StatusMessage, "stopped") {
		t.Fatalf("the task of the killed replica: %+v, %v", st, err)
	}
	t.Logf("failed %v after the SIGKILL: %s", time.Since(killed).Round(100*time.Millisecond), st.StatusMessage)
}
