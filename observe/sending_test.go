package observe_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestRawOutcomes: a tools/call result that goes on as raw JSON (a
// gateway's, and every result a client's sending middleware sees) is a
// tool error as the Result's IsError says, in both eras: the client's
// middleware counts the upstream's answers by it, and the server's the
// results a forwarding middleware returns.
func TestRawOutcomes(t *testing.T) {
	for _, version := range []string{protocol.Version20260728, protocol.LatestLegacyVersion} {
		t.Run(version, func(t *testing.T) {
			obs, err := observe.New(&observe.Options{TracerProvider: noop.NewTracerProvider()})
			if err != nil {
				t.Fatal(err)
			}
			c := connectWith(t, observed(obs), &client.Options{ProtocolVersion: version,
				Sending: []intercept.Middleware{obs.SendingMiddleware("up")}})
			forward := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
					if req.Method != protocol.MethodToolsCall {
						return next(ctx, req)
					}
					var out intercept.Result
					name := req.Name()
					_, err := c.CallTool(ctx, &protocol.CallToolParams{Name: name, Arguments: []byte(`{"message":"m"}`)})
					out.Value = jsontext.Value(`{"content":[],"isError":true}`)
					out.IsError = name == "fail"
					return out, err
				}
			}
			gw := server.New(protocol.Implementation{Name: "gw", Version: "1"}, &server.Options{
				Receiving: []intercept.Middleware{obs.Middleware("gw"), forward}})
			for _, name := range []string{"echo", "fail"} {
				server.AddTool(gw, &protocol.Tool{Name: name}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
					return "", nil
				})
			}
			front := connect(t, gw, version)
			for _, name := range []string{"echo", "fail"} {
				if _, err := front.Call(t.Context(), name, nil); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			body := scrape(t, obs)
			for _, want := range []string{
				`mcp_client_requests_total{method="tools/call",outcome="ok",server="up",tool="echo"} 1`,
				`mcp_client_requests_total{method="tools/call",outcome="tool_error",server="up",tool="fail"} 1`,
				`method="tools/call",outcome="ok",server="gw",tool="echo"} 1`,
				`method="tools/call",outcome="tool_error",server="gw",tool="fail"} 1`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
}
