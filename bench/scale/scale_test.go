package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The configuration scale up gives HAProxy is one HAProxy accepts, with
// every replica in it.
func TestHAProxyConfig(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Skip("haproxy is not installed (apt-get install -y haproxy)")
	}
	cfg := haproxyConfig(8080, []*replica{{name: "r1", port: 8001}, {name: "r2", port: 8002}})
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("haproxy", "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s\n%s", err, out, cfg)
	}
	for _, want := range []string{"server r1 127.0.0.1:8001", "server r2 127.0.0.1:8002", "balance roundrobin", "uri /readyz"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration lacks %q", want)
		}
	}
}

// Commands per call: the difference of two commandstats, INFO left out,
// over the warm-up and timed calls of the run's result line (the last).
func TestPerCall(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := write("before", "get 10\ninfo 3\nping 1\n")
	after := write("after", "get 12\ninfo 9\nping 1\nsmembers 1\n")
	result := write("result.jsonl", `{"impl":"old"}
{"impl":"2-replicas-haproxy","era":"legacy","transport":"http","phases":[{"calls":700,"warmup_calls":100},{"calls":150,"warmup_calls":50}]}
`)
	calls, what, err := runCalls(result)
	if err != nil || calls != 1000 || what != "2-replicas-haproxy, legacy era, http" {
		t.Fatalf("runCalls = %d, %q, %v", calls, what, err)
	}
	b, _ := readStats(before)
	a, _ := readStats(after)
	got := perCallLine(b, a, calls, what)
	want := "- 2-replicas-haproxy, legacy era, http: 3 Redis commands over 1000 tools/call (warm-up and timed, with the handshake's): **0.0030 per call** (GET 2, SMEMBERS 1)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
