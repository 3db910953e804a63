package observe_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// serve runs a server observed by obs and returns a client of it.
func serve(t *testing.T, obs *observe.Observer, version string) *client.Client {
	return connectWith(t, observed(obs), &client.Options{ProtocolVersion: version})
}

// observed is a server observed by obs with the tools echo and fail.
func observed(obs *observe.Observer) *server.Server {
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{
		Receiving: []intercept.Middleware{obs.Middleware("echo-server")},
	})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "fail"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "", io.ErrUnexpectedEOF
	})
	return s
}

// connect runs s over an in-memory pipe and returns a client of it in
// the protocol version given; both stop when the test ends.
func connect(t *testing.T, s *server.Server, version string) *client.Client {
	t.Helper()
	return connectWith(t, s, &client.Options{ProtocolVersion: version})
}

// connectWith is connect with the client's options.
func connectWith(t *testing.T, s *server.Server, opts *client.Options) *client.Client {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Run(ctx, a)
	c, err := client.Connect(ctx, client.StreamTransport{Stream: b}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestMetricsAndSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obs, err := observe.New(&observe.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	legacy := serve(t, obs, protocol.LatestLegacyVersion)
	stateless := serve(t, obs, protocol.Version20260728)
	for range 3 {
		legacy.Call(ctx, "echo", map[string]string{"message": "x"})
	}
	stateless.Call(ctx, "echo", map[string]string{"message": "x"})
	legacy.Call(ctx, "fail", nil)
	legacy.Call(ctx, "no-such-tool", nil)

	body := scrape(t, obs)
	for _, want := range []string{
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="ok",server="echo-server",tool="echo"} 3`,
		`mcp_server_requests_total{era="stateless",method="tools/call",outcome="ok",server="echo-server",tool="echo"} 1`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="tool_error",server="echo-server",tool="fail"} 1`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="error",server="echo-server",tool=""} 1`,
		`mcp_server_request_duration_seconds_count{method="tools/call",server="echo-server",tool="echo"} 4`,
		`mcp_server_requests_in_flight{method="tools/call",server="echo-server"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "no-such-tool") {
		t.Error("an unknown tool's name became a label")
	}
	for _, bogus := range []string{"x/bogus-1", "x/bogus-2"} {
		if err := legacy.CallMethod(ctx, bogus, nil, nil); err == nil {
			t.Errorf("%s: no error", bogus)
		}
	}
	body = scrape(t, obs)
	if strings.Contains(body, "bogus") {
		t.Error("a method the server does not serve became a label")
	}
	if want := `mcp_server_requests_total{era="legacy",method="other",outcome="error",server="echo-server",tool=""} 2`; !strings.Contains(body, want) {
		t.Errorf("metrics lack %s", want)
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "tools/call echo") || !strings.Contains(got, "tools/call fail") {
		t.Errorf("spans %v", names)
	}
}

// A client's trace context in _meta becomes the parent of the server's
// span, and the client's sending middleware puts its own into the
// request it sends.
func TestTraceContextCrossesInMeta(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obs, err := observe.New(&observe.Options{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	var sent protocol.Meta
	seen := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodToolsCall {
				sent = req.Meta
			}
			return next(ctx, req)
		}
	}
	c := connectWith(t, observed(obs), &client.Options{ProtocolVersion: protocol.LatestLegacyVersion,
		Sending: []intercept.Middleware{obs.SendingMiddleware("echo-server"), seen}})
	ctx, root := tp.Tracer("test").Start(context.Background(), "root")
	_, err = c.CallTool(ctx, &protocol.CallToolParams{Name: "echo", Arguments: []byte(`{"message":"m"}`)})
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	if tp, _ := sent["traceparent"].(string); !strings.Contains(tp, root.SpanContext().TraceID().String()) {
		t.Errorf("_meta traceparent %q does not carry the trace %s", tp, root.SpanContext().TraceID())
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()+" "+s.SpanKind().String()] = s
	}
	client, server := spans["tools/call echo client"], spans["tools/call echo server"]
	if client == nil || server == nil {
		t.Fatalf("spans %v", spans)
	}
	if server.Parent().SpanID() != client.SpanContext().SpanID() || client.Parent().SpanID() != root.SpanContext().SpanID() ||
		server.SpanContext().TraceID() != root.SpanContext().TraceID() {
		t.Errorf("the spans are not one trace: root %v, client %v (parent %v), server %v (parent %v)",
			root.SpanContext().SpanID(), client.SpanContext().SpanID(), client.Parent().SpanID(), server.SpanContext().SpanID(), server.Parent().SpanID())
	}
	if server.SpanKind() != trace.SpanKindServer {
		t.Error(server.SpanKind())
	}
}

// With the no-op provider no span is made, and the trace context a
// request came with still goes on into the requests it causes (a gateway
// without OTLP passes its clients' traces through); a request without
// one gets no _meta for it.
func TestTraceContextPassesWithoutTracing(t *testing.T) {
	obs, err := observe.New(&observe.Options{TracerProvider: noop.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{
		Receiving: []intercept.Middleware{obs.Middleware("relay")},
	})
	next := server.New(protocol.Implementation{Name: "next", Version: "1"}, nil)
	server.AddTool(next, &protocol.Tool{Name: "x"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		if req.Meta() == nil {
			return "no _meta", nil
		}
		tp, _ := req.Meta()["traceparent"].(string)
		return tp, nil
	})
	up := connectWith(t, next, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion,
		Sending: []intercept.Middleware{obs.SendingMiddleware("next")}})
	server.AddTool(s, &protocol.Tool{Name: "relay"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		res, err := up.Call(ctx, "x", nil)
		if err != nil {
			return "", err
		}
		return res.Content[0].Text, nil
	})
	ctx := context.Background()
	c := connect(t, s, protocol.LatestLegacyVersion)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		meta protocol.Meta
		want string
	}{
		{protocol.Meta{"traceparent": parent}, parent},
		{nil, "no _meta"},
	} {
		res, err := c.CallTool(ctx, &protocol.CallToolParams{Name: "relay", Meta: tc.meta})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].Text; got != tc.want {
			t.Errorf("with _meta %v, the call upstream got %q, want %q", tc.meta, got, tc.want)
		}
	}
}

// scrape returns what obs's metrics handler serves.
func scrape(t *testing.T, obs *observe.Observer) string {
	t.Helper()
	ts := httptest.NewServer(obs.Handler())
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
