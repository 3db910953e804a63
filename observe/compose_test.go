package observe_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
)

// TestLogCarriesSpan: the Observer's parts work together as one: the log
// line of a request names the span its tracing made, and its metrics
// count it.
func TestLogCarriesSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	var buf bytes.Buffer
	obs, err := observe.New(&observe.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		Logger:         slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, obs, protocol.LatestLegacyVersion)
	if _, err := c.Call(t.Context(), "echo", map[string]string{"message": "x"}); err != nil {
		t.Fatal(err)
	}
	var span string
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call echo" {
			span = s.SpanContext().SpanID().String()
		}
	}
	var logged string
	for line := range bytes.Lines(buf.Bytes()) {
		var l struct {
			SpanID string `json:"span_id"`
		}
		if json.Unmarshal(line, &l) == nil && bytes.Contains(line, []byte(`"tools/call"`)) {
			logged = l.SpanID
		}
	}
	if span == "" || logged != span {
		t.Errorf("span %q, log line's span_id %q:\n%s", span, logged, buf.Bytes())
	}
	if body := scrape(t, obs); !bytes.Contains([]byte(body), []byte(`mcp_server_requests_total{era="legacy",method="tools/call",outcome="ok",server="echo-server",tool="echo"} 1`)) {
		t.Errorf("metrics:\n%s", body)
	}
}
