package gateway

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/observe/otlp/otlptest"
	"github.com/ferrymcp/ferry/protocol"
)

// span is a span as an OTLP receiver got it.
type span struct {
	service, name, kind string
	trace, id, parent   string
}

// otlpReceiver is an OTLP/HTTP trace endpoint on loopback that decodes
// each export with the protocol's own generated code.
type otlpReceiver struct {
	*otlptest.Receiver
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	return &otlpReceiver{otlptest.NewReceiver(t)}
}

// spans returns the spans received so far.
func (r *otlpReceiver) spans() []span {
	var spans []span
	for _, export := range r.Exports() {
		for _, rs := range export.Request.ResourceSpans {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, span{service: service, name: s.Name, kind: s.Kind.String(),
						trace: hex.EncodeToString(s.TraceId), id: hex.EncodeToString(s.SpanId), parent: hex.EncodeToString(s.ParentSpanId)})
				}
			}
		}
	}
	return spans
}

// find waits for a span of service named name.
func (r *otlpReceiver) find(t *testing.T, service, name string) span {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		all := r.spans()
		for _, s := range all {
			if s.service == service && s.name == name {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q of %s among %+v", name, service, all)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chained returns an upstream server span named name whose parent is a
// gateway client span whose parent is a gateway server span of the same
// trace, or nil.
func (r *otlpReceiver) chained(name string) *span {
	all := r.spans()
	for i, s := range all {
		if s.service != "a" || s.name != name {
			continue
		}
		for _, cs := range all {
			if cs.service != "ferry-gateway" || cs.id != s.parent || cs.kind != "SPAN_KIND_CLIENT" {
				continue
			}
			for _, ss := range all {
				if ss.service == "ferry-gateway" && ss.id == cs.parent && ss.kind == "SPAN_KIND_SERVER" && ss.trace == s.trace {
					return &all[i]
				}
			}
		}
	}
	return nil
}

// observeUpstream adds to the options of the gateway's client to a
// server the middleware that observes what it sends, as ferry serve does.
func observeUpstream(obs *observe.Observer) func(string, *client.Options) {
	return func(server string, o *client.Options) {
		o.Sending = append(o.Sending, obs.SendingMiddleware(server))
	}
}

// tracedGateway starts a gateway in front of the test server "a", its
// requests and the server's traced into a receiver on loopback over OTLP,
// its metrics served at /metrics.
func tracedGateway(t *testing.T) (*otlpReceiver, *sdktrace.TracerProvider, *observe.Observer, *Gateway, string) {
	recv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	tp, stop, err := observe.TracerProviderFromEnv(ctxT(t), "ferry-gateway")
	if err != nil || tp == nil {
		t.Fatal(tp, err)
	}
	t.Cleanup(func() { stop(context.Background()) })
	obs, err := observe.New(&observe.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	// The server traces to the same receiver: it is given the variables
	// (a server does not inherit its gateway's environment).
	a := child(t, "a")
	a.Env["OTEL_EXPORTER_OTLP_ENDPOINT"] = recv.URL
	a.Env["OTEL_BSP_SCHEDULE_DELAY"] = "50"
	g, url := start(t, []*config.Server{a}, &Options{
		Middleware:    []intercept.Middleware{obs.Middleware("gateway")},
		ClientOptions: observeUpstream(obs),
		Metrics:       obs.Handler(),
	})
	return recv, tp, obs, g, url
}

// A request's trace goes from the gateway into the server behind it, both
// exported over OTLP to a real receiver; the metrics count the calls.
func TestTraceAndMetricsAcrossTheGateway(t *testing.T) {
	ctx := ctxT(t)
	recv, tp, obs, g, url := tracedGateway(t)
	obs.Watch(nil, func() observe.State {
		st := observe.State{Sessions: g.SessionVersions()}
		for name, s := range g.Status() {
			st.Upstreams = append(st.Upstreams, observe.Upstream{Name: name, State: s.State.String(), Restarts: s.Restarts})
		}
		return st
	})
	c := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	for range 3 {
		if got := text(t)(c.Call(ctx, "a__echo", map[string]string{"message": "traced"})); got != "traced" {
			t.Fatal(got)
		}
	}
	// A tool error, which the gateway passes on raw, counted as such on
	// both sides (the gateway tells the observing which it is).
	for _, args := range []map[string]string{{}, {"message": "not an error"}, {}} {
		if res, err := c.Call(ctx, "a__whoami", nil); err != nil || res.IsError {
			t.Fatal(res, err)
		}
		if res, err := c.Call(ctx, "a__echo", args); err != nil || res.IsError != (len(args) == 0) {
			t.Fatal(res, err)
		}
	}
	tp.ForceFlush(ctx)
	gwServer := recv.find(t, "ferry-gateway", "tools/call a__echo")
	gwClient := recv.find(t, "ferry-gateway", "tools/call echo")
	upServer := recv.find(t, "a", "tools/call echo")
	if gwServer.kind != "SPAN_KIND_SERVER" || gwClient.kind != "SPAN_KIND_CLIENT" || upServer.kind != "SPAN_KIND_SERVER" {
		t.Errorf("kinds: %s %s %s", gwServer.kind, gwClient.kind, upServer.kind)
	}
	// Every request a client makes of a server carries its trace into
	// the server: tools/call (three of them), prompts/get, resources/read.
	checkTracesCross(t, c, recv, tp)

	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="ok",server="gateway",tool="a__echo"} 4`,
		`mcp_client_requests_total{method="tools/call",outcome="ok",server="a",tool="echo"} 4`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="tool_error",server="gateway",tool="a__echo"} 2`,
		`mcp_client_requests_total{method="tools/call",outcome="tool_error",server="a",tool="echo"} 2`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="ok",server="gateway",tool="a__whoami"} 3`,
		`mcp_upstream_state{server="a",state="ready"} 1`,
		`mcp_upstream_restarts_total{server="a"} 0`,
		`mcp_server_sessions{era="legacy",version="2025-11-25"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A stateless client's tools/call, prompts/get and resources/read run
// upstream apart from the client's request (as pending requests, which
// may outlive it): their spans still join the request's trace.
func TestTraceAcrossTheGatewayStateless(t *testing.T) {
	ctx := ctxT(t)
	recv, tp, _, _, url := tracedGateway(t)
	c := connect(t, url+"/mcp", protocol.LatestVersion, nil)
	if got := text(t)(c.Call(ctx, "a__echo", map[string]string{"message": "traced"})); got != "traced" {
		t.Fatal(got)
	}
	checkTracesCross(t, c, recv, tp)
}

// checkTracesCross gets a prompt and reads a resource of server "a"
// through the gateway, after c called its echo, and checks that each of
// the three has an upstream server span whose parent is a gateway client
// span whose parent is a gateway server span, in one trace.
func checkTracesCross(t *testing.T, c *client.Client, recv *otlpReceiver, tp *sdktrace.TracerProvider) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := c.GetPrompt(ctx, "a__greet", map[string]string{"who": "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadResource(ctx, "test://a/version"); err != nil {
		t.Fatal(err)
	}
	tp.ForceFlush(ctx)
	for _, name := range []string{"tools/call echo", "prompts/get greet", "resources/read"} {
		recv.find(t, "a", name)
		if chained := recv.chained(name); chained == nil {
			t.Errorf("no upstream span %q whose parent is a gateway client span whose parent is a gateway server span", name)
		} else {
			t.Logf("%s: trace %s: gateway server span -> gateway client span -> upstream server span %s", name, chained.trace, chained.id)
		}
	}
}
