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
// over the warm-up and timed calls of the run's result line (the last);
// and between two runs, what the longer one added per call.
func TestPerCall(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	short, err := countRun(write("b1", "get 10\ninfo 3\nping 1\n"), write("a1", "get 12\ninfo 9\nping 1\nsmembers 1\n"),
		write("r1.jsonl", `{"impl":"old"}
{"impl":"2-replicas-haproxy","era":"legacy","transport":"http","phases":[{"calls":700,"warmup_calls":100},{"calls":150,"warmup_calls":50}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := "- 2-replicas-haproxy, legacy era, http: 3 Redis commands over 1000 tools/call (warm-up and timed, with the session's open and end): 0.0030 per call (GET 2, SMEMBERS 1)"
	if got := perCallLine(short); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	long, err := countRun(write("b2", "get 12\n"), write("a2", "get 14\nsmembers 1\nexpire 1\n"),
		write("r2.jsonl", `{"impl":"2-replicas-haproxy","era":"legacy","transport":"http","phases":[{"calls":2900,"warmup_calls":100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want = "- **0.0005 Redis commands per legacy tools/call** once the session is open: the longer run's 4 commands less the shorter run's 3, over its 2000 more calls (EXPIRE +1)"
	for _, got := range []string{marginalLine(short, long), marginalLine(long, short)} {
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
