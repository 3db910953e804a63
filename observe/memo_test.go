package observe_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestForwardedRawOutcomes: a gateway's tools/call is observed twice, as
// the request it serves and as the Call it forwards, and its result is
// raw JSON both times. The outcome the Call found is the request's when
// the request returns the same result, and only then.
func TestForwardedRawOutcomes(t *testing.T) {
	obs, err := observe.New(&observe.Options{TracerProvider: noop.NewTracerProvider()})
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]struct{ upstream, returned string }{
		// The upstream's result, passed on as it came.
		"ok":     {`{"content":[]}`, ""},
		"failed": {`{"content":[],"isError":true}`, ""},
		// A result other than the upstream's (a middleware of the
		// gateway's replaced it): classified for itself.
		"replaced-failed": {`{"content":[]}`, `{"isError":true,"content":[]}`},
		"replaced-ok":     {`{"content":[],"isError":true}`, `{"content":[]}`},
	}
	forward := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method != protocol.MethodToolsCall {
				return next(ctx, req)
			}
			a := answers[req.Name()]
			res, err := obs.Call(ctx, &observe.Outgoing{Server: "up", Method: protocol.MethodToolsCall, Name: req.Name()},
				func(ctx context.Context) (any, error) { return jsontext.Value(a.upstream), nil })
			if a.returned != "" {
				return intercept.Result{Value: jsontext.Value(a.returned)}, err
			}
			return intercept.Result{Value: res}, err
		}
	}
	s := server.New(protocol.Implementation{Name: "gw", Version: "1"}, &server.Options{
		Receiving: []intercept.Middleware{obs.Middleware("gw"), forward},
	})
	for name := range answers {
		server.AddTool(s, &protocol.Tool{Name: name}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return "", nil
		})
	}
	ctx := context.Background()
	c := connect(t, s, protocol.LatestLegacyVersion)
	for name := range answers {
		if _, err := c.Call(ctx, name, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	body := scrape(t, obs)
	for _, want := range []string{
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="ok",server="gw",tool="ok"} 1`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="tool_error",server="gw",tool="failed"} 1`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="tool_error",server="gw",tool="replaced-failed"} 1`,
		`mcp_server_requests_total{era="legacy",method="tools/call",outcome="ok",server="gw",tool="replaced-ok"} 1`,
		`mcp_client_requests_total{method="tools/call",outcome="ok",server="up",tool="ok"} 1`,
		`mcp_client_requests_total{method="tools/call",outcome="tool_error",server="up",tool="failed"} 1`,
		`mcp_client_requests_total{method="tools/call",outcome="ok",server="up",tool="replaced-failed"} 1`,
		`mcp_client_requests_total{method="tools/call",outcome="tool_error",server="up",tool="replaced-ok"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
