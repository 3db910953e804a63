package interop

// Two `ferry serve` replicas sharing a real redis-server, behind a real
// HAProxy balancing round-robin with health checks on /readyz: a legacy
// session is served by both, survives the SIGKILL of one with no new
// initialize, costs Redis no command per call once each replica has its
// copy, and a stateless call goes on while Redis is down.

import (
	"bufio"
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
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// needBinaries skips the test when a program it runs is not installed:
// they come from Debian (apt-get install -y redis-server haproxy).
func needBinaries(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed (apt-get install -y redis-server haproxy): skipping the scale-out test", n)
		}
	}
}

// daemon starts cmd, killed and waited for when the test ends.
func daemon(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// waitFor polls ok until it holds, for 30 seconds at most.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replica starts one `ferry serve` sharing sessions through redisURL,
// with the extra arguments, and returns its URL once it listens.
func replica(t *testing.T, bin, cfg, redisURL string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--config", cfg, "--addr", "127.0.0.1:0", "--redis", redisURL}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	daemon(t, cmd)
	// found gets the URL, or what ferry serve said before it exited.
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`^ferry serve: (http://[0-9.:]+)/mcp`)
		sc := bufio.NewScanner(stderr)
		var said strings.Builder
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				io.Copy(io.Discard, stderr)
				return
			}
			said.WriteString(sc.Text() + "\n")
		}
		found <- said.String()
	}()
	select {
	case url := <-found:
		if !strings.HasPrefix(url, "http://") {
			t.Fatalf("ferry serve exited: %s", url)
		}
		return cmd, url
	case <-time.After(30 * time.Second):
		t.Fatal("ferry serve did not say where it listens")
	}
	return nil, ""
}

// haproxyConfig balances round-robin over the replicas, checking their
// /readyz (which checks the Host header, so the check sends one), and
// serves its statistics as CSV at /stats;csv on statsPort.
func haproxyConfig(port, statsPort int, replicas []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 256
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch
frontend mcp
  bind 127.0.0.1:%d
  default_backend ferry
frontend stats
  bind 127.0.0.1:%d
  stats enable
  stats uri /stats
backend ferry
  balance roundrobin
  option httpchk
  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
  default-server check inter 200ms fall 1 rise 1
`, port, statsPort)
	for i, r := range replicas {
		fmt.Fprintf(&b, "  server r%d %s\n", i, strings.TrimPrefix(r, "http://"))
	}
	return b.String()
}

// served returns how many requests HAProxy sent each replica.
func served(t *testing.T, statsURL string) map[string]int {
	t.Helper()
	resp, err := http.Get(statsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("# ")))).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("HAProxy stats: %v\n%s", err, body)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	out := map[string]int{}
	for _, row := range rows[1:] {
		if row[col["pxname"]] == "ferry" && strings.HasPrefix(row[col["svname"]], "r") {
			out[row[col["svname"]]], _ = strconv.Atoi(row[col["stot"]])
		}
	}
	return out
}

// redisCommands returns how many commands Redis has run, INFO itself not
// counted.
func redisCommands(t *testing.T, sock string) int {
	t.Helper()
	out, err := exec.Command("redis-cli", "-s", sock, "INFO", "commandstats").Output()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "cmdstat_") || strings.HasPrefix(line, "cmdstat_info:") {
			continue
		}
		_, rest, _ := strings.Cut(line, "calls=")
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		total += n
	}
	return total
}

// countInitialize counts the initialize requests a client sends.
type countInitialize struct{ n atomic.Int32 }

func (c *countInitialize) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			c.n.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestScaleOutBehindHAProxy(t *testing.T) {
	needBinaries(t, "redis-server", "redis-cli", "haproxy")
	bin := ferryBinary(t)
	dir := t.TempDir()

	sock := filepath.Join(dir, "redis.sock")
	redis := daemon(t, exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir))
	waitFor(t, "redis-server", func() bool { _, err := os.Stat(sock); return err == nil })

	cfg := filepath.Join(dir, "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": exampleServer}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var urls []string
	for range 2 {
		cmd, url := replica(t, bin, cfg, "unix://"+sock)
		cmds, urls = append(cmds, cmd), append(urls, url)
	}

	port, statsPort := freePort(t), freePort(t)
	hcfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(hcfg, []byte(haproxyConfig(port, statsPort, urls)), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon(t, exec.Command("haproxy", "-db", "-f", hcfg))
	lb := fmt.Sprintf("http://127.0.0.1:%d", port)
	stats := fmt.Sprintf("http://127.0.0.1:%d/stats;csv", statsPort)
	waitFor(t, "HAProxy to see both replicas ready", func() bool {
		resp, err := http.Get(stats)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return bytes.Count(body, []byte(",UP,")) >= 2
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inits := &countInitialize{}
	c, err := client.Connect(ctx, &streamable.Transport{URL: lb + "/mcp", Client: &http.Client{Transport: inits}},
		&client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(what string, n int) {
		t.Helper()
		for i := range n {
			res, err := c.Call(ctx, "everything__echo", map[string]any{"message": what})
			if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, what) {
				t.Fatalf("%s, call %d: %+v, %v", what, i, res, err)
			}
		}
	}

	call("both", 10)
	by := served(t, stats)
	t.Logf("HAProxy sent the replicas %v requests", by)
	if by["r0"] < 3 || by["r1"] < 3 {
		t.Fatalf("HAProxy did not spread the session over both replicas: %v", by)
	}

	before := redisCommands(t, sock)
	const n = 20
	call("counted", n)
	perCall := float64(redisCommands(t, sock)-before) / n
	t.Logf("Redis commands per legacy tools/call: %.2f", perCall)
	if perCall != 0 {
		t.Errorf("a legacy tools/call costs %.2f Redis commands, want none", perCall)
	}

	cmds[0].Process.Kill() // SIGKILL
	cmds[0].Wait()
	call("survivor", 10)
	if got := inits.n.Load(); got != 1 {
		t.Errorf("the client sent initialize %d times, want once", got)
	}

	redis.Process.Kill()
	redis.Wait()
	stateless, err := client.Connect(ctx, &streamable.Transport{URL: lb + "/mcp"}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer stateless.Close()
	res, err := stateless.Call(ctx, "everything__echo", map[string]any{"message": "no redis"})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "no redis") {
		t.Fatalf("a stateless call with Redis down: %+v, %v", res, err)
	}
	call("legacy without redis", 2)
	// A change to the session cannot be shared: it fails whole, saying so.
	err = c.SetLogLevel(ctx, protocol.LevelError)
	if err == nil || !strings.Contains(err.Error(), "could not be shared") {
		t.Errorf("setting the log level with Redis down: %v, want an error saying it could not be shared", err)
	}
	t.Logf("with Redis down, logging/setLevel: %v", err)

	// Redis back (empty, as after a restart without persistence): the
	// replica reconnects by itself and the change goes through.
	os.Remove(sock)
	daemon(t, exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir))
	waitFor(t, "redis-server again", func() bool { _, err := os.Stat(sock); return err == nil })
	waitFor(t, "the change to go through once Redis is back", func() bool {
		return c.SetLogLevel(ctx, protocol.LevelError) == nil
	})
}

// The HAProxy configuration in deploy/ is one HAProxy takes.
func TestDeployHAProxyConfig(t *testing.T) {
	needBinaries(t, "haproxy")
	out, err := exec.Command("haproxy", "-c", "-f", filepath.Join("..", "deploy", "haproxy", "haproxy.cfg")).CombinedOutput()
	if err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
}
