package interop

// The set-ups of deploy/: nginx's configuration is one nginx takes and
// balances a legacy session over two replicas with; the Kubernetes
// manifests pass the check of their module.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// nginxConfig returns deploy/nginx/ferry.conf listening on listen and
// balancing over replicas in place of the deployment's host names, which
// do not resolve here.
func nginxConfig(t *testing.T, listen string, replicas []string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "deploy", "nginx", "ferry.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(data)
	swap := map[string]string{"listen 8080;": "listen " + listen + ";"}
	for i, r := range replicas {
		swap[fmt.Sprintf("server ferry-%d:8000 ", i+1)] = "server " + strings.TrimPrefix(r, "http://") + " "
	}
	for from, to := range swap {
		if !strings.Contains(conf, from) {
			t.Fatalf("deploy/nginx/ferry.conf has no %q", from)
		}
		conf = strings.Replace(conf, from, to, 1)
	}
	return conf
}

// nginx returns the command that runs nginx on conf in a folder of its
// own, with the extra arguments.
func nginx(t *testing.T, conf string, extra ...string) *exec.Cmd {
	t.Helper()
	needBinaries(t, "nginx")
	dir := t.TempDir()
	// Run as root, nginx's workers are another user: they need to reach
	// the folder of its temporary files.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-p", dir, "-c", file, "-e", "stderr", "-g", "daemon off; pid " + filepath.Join(dir, "nginx.pid") + ";"}, extra...)
	return exec.Command("nginx", args...)
}

// startNginx starts cmd in a process group of its own. The end of the
// test stops it with SIGTERM, on which its master ends its workers and
// waits for them; the group is killed if that takes longer than 10 s
// (nginx's workers outlive their master's SIGKILL).
func startNginx(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
}

// The nginx configuration in deploy/ is one nginx takes.
func TestDeployNginxConfig(t *testing.T) {
	conf := nginxConfig(t, fmt.Sprintf("127.0.0.1:%d", freePort(t)), []string{"127.0.0.1:8001", "127.0.0.1:8002"})
	if out, err := nginx(t, conf, "-t").CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

// The Kubernetes manifests in deploy/ pass the check of their module
// (strict decoding into the API's types, and their agreement).
func TestDeployKubernetesManifests(t *testing.T) {
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir = filepath.Join("..", "deploy", "kubernetes")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in deploy/kubernetes: %v\n%s", err, out)
	}
}

// toolCalls returns how many tools/call a replica has served, from its
// /metrics.
func toolCalls(t *testing.T, replica string) int {
	t.Helper()
	resp, err := http.Get(replica + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mcp_server_requests_total{") && strings.Contains(line, `method="tools/call"`) {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			n += int(v)
		}
	}
	return n
}

// nginx with deploy/'s configuration spreads one legacy session over two
// replicas, and once one is killed, sends its calls to the other: no new
// initialize.
func TestScaleOutBehindNginx(t *testing.T) {
	needBinaries(t, "nginx")
	cl := startReplicas(t, 2)
	port := freePort(t)
	startNginx(t, nginx(t, nginxConfig(t, fmt.Sprintf("127.0.0.1:%d", port), cl.urls)))
	cl.lb = fmt.Sprintf("http://127.0.0.1:%d", port)
	waitFor(t, "nginx to answer", func() bool {
		resp, err := http.Get(cl.lb + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inits := &countInitialize{}
	c, err := client.Connect(ctx, &streamable.Transport{URL: cl.lb + "/mcp", Client: &http.Client{Transport: inits}},
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
	by := []int{toolCalls(t, cl.urls[0]), toolCalls(t, cl.urls[1])}
	t.Logf("nginx sent the replicas %v tools/call", by)
	if by[0] < 3 || by[1] < 3 {
		t.Fatalf("nginx did not spread the session over both replicas: %v", by)
	}
	cl.replicas[0].Process.Kill()
	cl.replicas[0].Wait()
	call("survivor", 10)
	if got := inits.n.Load(); got != 1 {
		t.Errorf("the client sent initialize %d times, want once", got)
	}
}
