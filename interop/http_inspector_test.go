package interop

// ferry's example server over Streamable HTTP (examples/everything -http,
// streamablehandler.New at /mcp) driven by the MCP Inspector's CLI with
// --transport http, in both protocol eras: the cases of
// inspector_test.go, with a recording reverse proxy in front of the server
// showing which era each run spoke on the wire.

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/protocol"
)

func TestInspectorCLIFerryHTTPServer(t *testing.T) {
	launcher := nodePackageBin(t, "@modelcontextprotocol/inspector", "clients/launcher/build/index.js")
	target := startExampleHTTP(t)
	home := t.TempDir()
	for _, era := range []string{"legacy", "stateless"} {
		t.Run(era, func(t *testing.T) {
			for _, tc := range inspectorCases {
				name := tc.method
				if tc.name != "" {
					name += "/" + tc.name
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					// A proxy of its own, so that the wire log holds this
					// run's requests only.
					wire := &wireLog{}
					proxy := httptest.NewServer(&httputil.ReverseProxy{
						Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
						Transport:     wire.wrap(http.DefaultTransport),
						FlushInterval: -1,
					})
					defer proxy.Close()
					args := []string{launcher, "--cli", "--format", "json",
						"--transport", "http", "--server-url", proxy.URL + "/mcp",
						"--protocol-era", inspectorEra(era), "--method", tc.method}
					args = append(args, tc.args...)
					res := runInspector(t, home, args)
					tc.check(t, res)
					checkResultEra(t, era, tc.statelessMeta, res)
					checkInspectorWire(t, era, tc.method, wire)
				})
			}
		})
	}
}

// checkInspectorWire checks that a run spoke its era over HTTP: legacy,
// a session opened by initialize and named by every later request;
// stateless, no initialize and no session, every POST carrying
// MCP-Protocol-Version 2026-07-28.
func checkInspectorWire(t *testing.T, era, method string, wire *wireLog) {
	t.Helper()
	all := wire.all()
	rpcs := []string{}
	for _, e := range all {
		if e.RPC != "" {
			rpcs = append(rpcs, e.RPC)
		}
		if e.Status >= 300 && !(e.Method == http.MethodGet && e.Status == http.StatusMethodNotAllowed) {
			t.Errorf("%s: %s was refused", era, e)
		}
	}
	if !slices.Contains(rpcs, method) {
		t.Errorf("%s: no %s POSTed; wire:%s", era, method, wire)
	}
	switch era {
	case "legacy":
		inits := wire.find(func(e wireEntry) bool { return e.RPC == protocol.MethodInitialize })
		if len(inits) != 1 || inits[0].RespSession == "" {
			t.Fatalf("legacy: want one initialize answered with an Mcp-Session-Id; wire:%s", wire)
		}
		sid := inits[0].RespSession
		for _, e := range all {
			if e.RPC == protocol.MethodInitialize {
				continue
			}
			if e.Session != sid || e.Version == "" || protocol.IsStateless(e.Version) {
				t.Errorf("legacy: request outside the session or without a legacy MCP-Protocol-Version: %s", e)
			}
		}
		// The CLI (StreamableHTTPClientTransport of
		// @modelcontextprotocol/client, whose close aborts its requests
		// without calling terminateSession) sends no DELETE
		// when it is done, which the specification leaves to the client
		// ("SHOULD send an HTTP DELETE"): ferry's handler keeps such a
		// session until SessionIdleTimeout or Close. Not checked either
		// way, so that a CLI that starts sending it still passes.
		if dels := wire.find(func(e wireEntry) bool { return e.Method == http.MethodDelete }); len(dels) > 0 && (dels[0].Session != sid || dels[0].Status != http.StatusNoContent) {
			t.Errorf("legacy: DELETE %s, want one of session %s answered 204", dels[0], sid)
		}
	case "stateless":
		for _, e := range all {
			if e.Method != http.MethodPost || e.Version != protocol.Version20260728 || e.Session != "" || e.RespSession != "" || e.RPC == protocol.MethodInitialize {
				t.Errorf("stateless: not a stateless 2026-07-28 request: %s", e)
			}
		}
	}
	if testing.Verbose() {
		t.Logf("%s wire:%s", era, wire)
	}
}

// startExampleHTTP runs the example server with -http on a free port of
// the loopback interface and returns its base URL; the server is ended
// with SIGTERM at the end of the test and must exit cleanly.
func startExampleHTTP(t *testing.T) *url.URL {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, exampleServer, "-http", "127.0.0.1:0")
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	addr := make(chan string, 1)
	drained := make(chan struct{})
	listening := regexp.MustCompile(`^listening on (http://\S+)/mcp$`)
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			out.Write([]byte(sc.Text() + "\n"))
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		defer cancel()
		cmd.Process.Signal(syscall.SIGTERM)
		<-drained
		if err := cmd.Wait(); err != nil {
			t.Errorf("example server after SIGTERM: %v\n%s", err, out)
		}
	})
	select {
	case a := <-addr:
		u, err := url.Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		return u
	case <-drained:
		t.Fatalf("the example server exited before listening:\n%s", out)
	case <-time.After(20 * time.Second):
		t.Fatalf("the example server did not listen within 20s:\n%s", out)
	}
	return nil
}
