package otelcol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// upstreamEnv, set in its environment, makes the test binary the upstream
// server behind the gateway (see TestMain).
const upstreamEnv = "FERRY_OTELCOL_UPSTREAM"

// The service names the two processes report in their resources: the
// gateway's from OTEL_SERVICE_NAME in ferry's environment, the upstream's
// from the --env that gives it to the server alone (a server does not
// inherit the gateway's environment).
const (
	gatewayService  = "ferry-gateway-otelcol"
	upstreamService = "weather-upstream"
)

// The test binary is also the upstream server: run with upstreamEnv set,
// it serves MCP over stdio and traces its requests to OTLP, so that the
// gateway runs a real child process without another build.
func TestMain(m *testing.M) {
	if os.Getenv(upstreamEnv) != "" {
		os.Exit(runUpstream())
	}
	os.Exit(m.Run())
}

type messageIn struct {
	Message string `json:"message"`
}

// runUpstream serves a tool, a prompt and a resource on stdio, traced to
// OTLP as the standard variables say, and flushes its spans at the end.
func runUpstream() int {
	ctx := context.Background()
	tp, stop, err := observe.TracerProviderFromEnv(ctx, "upstream")
	if err != nil || tp == nil {
		fmt.Fprintln(os.Stderr, "upstream: no OTLP tracer provider:", err)
		return 1
	}
	obs, err := observe.New(&observe.Options{TracerProvider: tp})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"},
		&server.Options{Receiving: []intercept.Middleware{obs.Middleware("weather")}})
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes the message."},
		func(ctx context.Context, req *server.Request, in messageIn) (string, error) { return in.Message, nil })
	s.AddPrompt(&protocol.Prompt{Name: "greet", Arguments: []protocol.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("hello " + args["who"])}}}, nil
		})
	s.AddResource(&protocol.Resource{URI: "weather://today", Name: "today"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "sunny"}}}, nil
		})
	err = s.Run(ctx, stdio.ServerStream())
	// The gateway closes our stdin when it stops and gives us time to
	// exit: the spans still batched go out now.
	if serr := stop(ctx); serr != nil {
		fmt.Fprintln(os.Stderr, "upstream: flushing spans:", serr)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startCollector starts the OpenTelemetry Collector's OTLP receiver on a
// loopback port, OTLP/HTTP only, and returns its base URL and the sink
// that gets the traces it decodes.
func startCollector(t *testing.T) (string, *consumertest.TracesSink) {
	t.Helper()
	factory := otlpreceiver.NewFactory()
	sink := new(consumertest.TracesSink)
	// The receiver listens where its configuration says and does not tell
	// the port it got: take a free one, and take another if someone else
	// took it in between.
	var errs []error
	for range 5 {
		addr := freeAddr(t)
		cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
		cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
		cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
		recv, err := factory.CreateTraces(t.Context(), receivertest.NewNopSettings(factory.Type()), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := recv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			errs = append(errs, err)
			recv.Shutdown(context.Background())
			continue
		}
		t.Cleanup(func() {
			if err := recv.Shutdown(context.Background()); err != nil {
				t.Errorf("receiver shutdown: %v", err)
			}
		})
		return "http://" + addr, sink
	}
	t.Fatalf("the OTLP receiver did not start: %v", errors.Join(errs...))
	return "", nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// buildFerry builds the ferry command from the repository, in its
// workspace (cmd/ferry is a module of go.work), into dir.
func buildFerry(t *testing.T, dir string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(dir, "ferry")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ferry")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ferry: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// span is a span as the collector decoded it, with its resource's
// service.name.
type span struct {
	service           string
	name              string
	kind              ptrace.SpanKind
	trace, id, parent string
	method, version   string // mcp.method.name, mcp.protocol.version
}

func (s span) String() string {
	return fmt.Sprintf("%s %q %s trace=%s id=%s parent=%s method=%s version=%s", s.service, s.name, s.kind, s.trace, s.id, s.parent, s.method, s.version)
}

// spans flattens what the sink got.
func spans(sink *consumertest.TracesSink) []span {
	var all []span
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			service := ""
			if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
				service = v.AsString()
			}
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					sp := span{service: service, name: s.Name(), kind: s.Kind(),
						trace: s.TraceID().String(), id: s.SpanID().String(), parent: s.ParentSpanID().String()}
					if v, ok := s.Attributes().Get("mcp.method.name"); ok {
						sp.method = v.AsString()
					}
					if v, ok := s.Attributes().Get("mcp.protocol.version"); ok {
						sp.version = v.AsString()
					}
					all = append(all, sp)
				}
			}
		}
	}
	return all
}

// chain is a request's path through the gateway as three spans.
type chain struct{ gwServer, gwClient, upServer span }

// findChain returns the upstream SERVER span named name whose parent is a
// gateway CLIENT span whose parent is a gateway SERVER span of a request
// in the given protocol version, all three of one trace.
func findChain(all []span, name, version string) (chain, bool) {
	for _, up := range all {
		if up.service != upstreamService || up.name != name || up.kind != ptrace.SpanKindServer {
			continue
		}
		for _, cl := range all {
			if cl.service != gatewayService || cl.kind != ptrace.SpanKindClient || cl.id != up.parent || cl.trace != up.trace {
				continue
			}
			for _, sv := range all {
				if sv.service == gatewayService && sv.kind == ptrace.SpanKindServer && sv.id == cl.parent && sv.trace == up.trace && sv.version == version {
					return chain{sv, cl, up}, true
				}
			}
		}
	}
	return chain{}, false
}

// Issue 22: a trace that the shipped `ferry serve` exports to the
// OpenTelemetry Collector's OTLP receiver holds the gateway's spans and
// the upstream server's, one trace per request, for tools/call,
// prompts/get and resources/read, from a client of either era (a
// stateless client's requests run upstream apart from the client's
// request, a legacy one's within it).
func TestGatewayTraceInTheCollector(t *testing.T) {
	base, sink := startCollector(t)
	dir := t.TempDir()
	bin := buildFerry(t, dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The gateway names an ad-hoc server after its program.
	upstream := filepath.Join(dir, "weather")
	if err := os.Symlink(exe, upstream); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// -v passes the upstream's stderr on, where it reports a failed flush.
	cmd := exec.Command(bin, "serve", "-v", "--addr", "127.0.0.1:0",
		"--env", upstreamEnv+"=1", "--env", "OTEL_SERVICE_NAME="+upstreamService,
		// The upstream's exports are gzipped, the gateway's are not: the
		// receiver decodes both.
		"--env", "OTEL_EXPORTER_OTLP_COMPRESSION=gzip",
		// The collector's address, passed on from ferry's environment.
		"--env", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"--", upstream)
	// No OTEL_* variable of the caller's: only these.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+base, "OTEL_SERVICE_NAME="+gatewayService)
	var stderr syncBuffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("ferry serve's stderr:\n%s", stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`^ferry serve: (http://[0-9.:]+)/mcp`)
		lines := bufio.NewScanner(pr)
		for lines.Scan() {
			stderr.Write([]byte(lines.Text() + "\n"))
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case err := <-exited:
		stopped = true
		t.Fatalf("ferry serve exited: %v", err)
	case <-ctx.Done():
		t.Fatal("ferry serve did not say where it listens")
	}
	waitReady(t, ctx, url)

	versions := []string{protocol.LatestVersion, protocol.LatestLegacyVersion}
	for _, version := range versions {
		c, err := client.Connect(ctx, &streamable.Transport{URL: url + "/mcp"}, &client.Options{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		res, err := c.Call(ctx, "weather__echo", map[string]string{"message": "traced"})
		if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].Text != "traced" {
			t.Fatalf("%s: tools/call: %+v, %v", version, res, err)
		}
		if _, err := c.GetPrompt(ctx, "weather__greet", map[string]string{"who": "w"}); err != nil {
			t.Fatalf("%s: prompts/get: %v", version, err)
		}
		if _, err := c.ReadResource(ctx, "weather://today"); err != nil {
			t.Fatalf("%s: resources/read: %v", version, err)
		}
		c.Close()
	}

	// SIGTERM: the gateway stops its server (whose stdin it closes, so
	// that it flushes its spans) and flushes its own before it exits.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("ferry serve after SIGTERM: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ferry serve did not stop after SIGTERM")
	}

	// The upstream span's name and the mcp.method.name of all three.
	want := map[string]string{
		"tools/call echo":   "tools/call",
		"prompts/get greet": "prompts/get",
		"resources/read":    "resources/read",
	}
	// The spans were sent before the processes exited; the poll only
	// covers the receiver handing them to the sink.
	var all []span
	deadline := time.Now().Add(15 * time.Second)
	for {
		all = spans(sink)
		var missing []string
		for name := range want {
			for _, version := range versions {
				if _, ok := findChain(all, name, version); !ok {
					missing = append(missing, name+" ("+version+")")
				}
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s, no chain of spans gateway SERVER -> gateway CLIENT -> upstream SERVER in one trace for %s; the collector got:\n%s",
				strings.Join(missing, ", "), join(all))
		}
		time.Sleep(50 * time.Millisecond)
	}
	services := map[string]bool{}
	for _, s := range all {
		services[s.service] = true
	}
	if len(services) != 2 || !services[gatewayService] || !services[upstreamService] {
		t.Errorf("service.name of the resources: %v, want %s and %s", services, gatewayService, upstreamService)
	}
	traces := map[string]bool{}
	for name, method := range want {
		for _, version := range versions {
			ch, _ := findChain(all, name, version)
			for _, s := range []span{ch.gwServer, ch.gwClient, ch.upServer} {
				if s.method != method {
					t.Errorf("%s: mcp.method.name %q, want %q", s, s.method, method)
				}
			}
			if traces[ch.upServer.trace] {
				t.Errorf("%s (%s): trace %s holds another request too", name, version, ch.upServer.trace)
			}
			traces[ch.upServer.trace] = true
			t.Logf("%s (%s): trace %s: %s %q -> %s %q -> %s %q", name, version, ch.upServer.trace,
				ch.gwServer.service, ch.gwServer.name, ch.gwClient.service, ch.gwClient.name, ch.upServer.service, ch.upServer.name)
		}
	}
	if out := stderr.String(); strings.Contains(out, "otlp:") || strings.Contains(out, "flushing") {
		t.Errorf("an OTLP export failed:\n%s", out)
	}
}

func join(all []span) string {
	var b strings.Builder
	for _, s := range all {
		b.WriteString(s.String() + "\n")
	}
	return b.String()
}

// waitReady waits until the gateway's servers are connected.
func waitReady(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the server behind ferry serve did not get ready")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
