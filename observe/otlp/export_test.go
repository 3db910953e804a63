package otlp

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ferrymcp/ferry/observe/otlp/otlptest"
)

// takeOne returns the one export recv got since the last call.
func takeOne(t *testing.T, recv *otlptest.Receiver) otlptest.Export {
	t.Helper()
	exports := recv.Take()
	if len(exports) != 1 {
		t.Fatalf("%d exports, want 1", len(exports))
	}
	return exports[0]
}

// sorted orders what OpenTelemetry's exporter leaves in map order: the
// resources and their scopes.
func sorted(req *coltrace.ExportTraceServiceRequest) *coltrace.ExportTraceServiceRequest {
	key := func(m proto.Message) string { return prototext.Format(m) }
	slices.SortFunc(req.ResourceSpans, func(a, b *tracepb.ResourceSpans) int { return strings.Compare(key(a.Resource), key(b.Resource)) })
	for _, rs := range req.ResourceSpans {
		slices.SortFunc(rs.ScopeSpans, func(a, b *tracepb.ScopeSpans) int { return strings.Compare(key(a.Scope), key(b.Scope)) })
	}
	return req
}

// The same spans, from two resources and three scopes, exported by this
// package and by the OpenTelemetry SDK's OTLP/HTTP exporter, reach a
// receiver as the same message, with the same headers, compressed or not.
func TestSameExportAsOpenTelemetrySDK(t *testing.T) {
	var spans []sdktrace.ReadOnlySpan
	for _, svc := range []string{"gateway", "upstream"} {
		res := resource.NewSchemaless(attribute.String("service.name", svc), attribute.Int("pid", 7))
		spans = append(spans, record(t, res, func(tp trace.TracerProvider) {
			for _, scope := range []string{"a", "b"} {
				ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
				ctx, s := tp.Tracer(scope).Start(ctx, svc+" "+scope, trace.WithSpanKind(trace.SpanKindClient),
					trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.StringSlice("x", []string{"y"})))
				_, child := tp.Tracer(scope, trace.WithInstrumentationVersion("v1")).Start(ctx, "child")
				child.AddEvent("e", trace.WithAttributes(attribute.Float64("f", 1.5)))
				child.AddLink(trace.Link{SpanContext: remote})
				child.SetStatus(codes.Ok, "ignored for ok")
				child.End()
				s.SetStatus(codes.Error, "boom")
				s.End()
			}
		})...)
	}
	for _, gz := range []bool{false, true} {
		recv := otlptest.NewReceiver(t)
		ctx := context.Background()
		compression := otlptracehttp.NoCompression
		if gz {
			compression = otlptracehttp.GzipCompression
		}
		theirs, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(recv.URL+"/v1/traces"),
			otlptracehttp.WithCompression(compression), otlptracehttp.WithHeaders(map[string]string{"X-Key": "k"}))
		if err != nil {
			t.Fatal(err)
		}
		if err := theirs.ExportSpans(ctx, spans); err != nil {
			t.Fatal(err)
		}
		theirs1 := takeOne(t, recv)
		ours, err := New(Options{Endpoint: recv.URL + "/v1/traces", Gzip: gz, Headers: map[string]string{"X-Key": "k"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ours.ExportSpans(ctx, spans); err != nil {
			t.Fatal(err)
		}
		ours1 := takeOne(t, recv)
		want, got := sorted(theirs1.Request), sorted(ours1.Request)
		if !proto.Equal(want, got) {
			t.Errorf("gzip %v: ours:\n%s\ntheirs:\n%s", gz, prototext.Format(got), prototext.Format(want))
		}
		for _, h := range []string{"X-Key", "Content-Type", "Content-Encoding"} {
			if ours1.Header.Get(h) != theirs1.Header.Get(h) {
				t.Errorf("gzip %v: header %s: ours %q, theirs %q", gz, h, ours1.Header.Get(h), theirs1.Header.Get(h))
			}
		}
		theirs.Shutdown(ctx)
		ours.Shutdown(ctx)
	}
}

// answer is a receiver's reply to one attempt.
type answer struct {
	status      int
	retryAfter  string
	contentType string
	body        []byte
}

// roundTrips answers each attempt with the next of answers (the last
// again when they run out), counting the attempts and their times.
type roundTrips struct {
	answers  []answer
	attempts []time.Time
}

func (rt *roundTrips) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	a := rt.answers[min(len(rt.attempts), len(rt.answers)-1)]
	rt.attempts = append(rt.attempts, time.Now())
	if a.status == 0 {
		return nil, errors.New("connection refused")
	}
	h := http.Header{}
	if a.retryAfter != "" {
		h.Set("Retry-After", a.retryAfter)
	}
	if a.contentType != "" {
		h.Set("Content-Type", a.contentType)
	}
	return &http.Response{StatusCode: a.status, Status: strconv.Itoa(a.status) + " " + http.StatusText(a.status), Header: h,
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: req}, nil
}

// pb appends length-delimited fields: num, then bytes, pairs.
func pb(fields ...any) []byte {
	var b []byte
	for i := 0; i < len(fields); i += 2 {
		num := protowire.Number(fields[i].(int))
		switch v := fields[i+1].(type) {
		case int:
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		case string:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, v)
		case []byte:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, v)
		}
	}
	return b
}

// Retries: when the receiver is busy (429, 502, 503, 504) the export is
// tried again, after the Retry-After it gives or a back-off, within the
// timeout; other refusals and network failures end it at once. Time is
// synctest's.
func TestRetries(t *testing.T) {
	ok := answer{status: 200, contentType: "application/x-protobuf"}
	busy := answer{status: 503}
	tests := []struct {
		name     string
		answers  []answer
		attempts int
		err      string // "" for success; the error's text contains it
		waited   time.Duration
		partial  *PartialSuccessError
	}{
		{name: "taken", answers: []answer{ok}, attempts: 1},
		{name: "empty 2xx", answers: []answer{{status: 202}}, attempts: 1},
		{name: "busy twice", answers: []answer{busy, {status: 502}, ok}, attempts: 3},
		{name: "retry after", answers: []answer{{status: 429, retryAfter: "3"}, ok}, attempts: 2, waited: 3 * time.Second},
		{name: "retry after past the timeout", answers: []answer{{status: 429, retryAfter: "60"}}, attempts: 1, err: "429 Too Many Requests; no time left"},
		{name: "busy until the timeout", answers: []answer{{status: 504}}, err: "504 Gateway Timeout"},
		{name: "refused", answers: []answer{{status: 400, contentType: "application/x-protobuf", body: pb(1, 3, 2, "bad\nspan id")}}, attempts: 1,
			err: "400 Bad Request: bad span id"},
		{name: "refused with a page", answers: []answer{{status: 404, contentType: "text/html", body: []byte("<html><title>Not here</title></html>")}},
			attempts: 1, err: "404 Not Found: Not here"},
		{name: "network", answers: []answer{{}}, attempts: 1, err: "connection refused"},
		{name: "partial", answers: []answer{{status: 200, body: pb(1, pb(1, 2, 2, "too old"))}}, attempts: 1,
			err: "rejected 2 spans: too old", partial: &PartialSuccessError{Rejected: 2, Message: "too old"}},
		{name: "partial, only a message", answers: []answer{{status: 200, body: pb(1, pb(2, "warning"))}}, attempts: 1, err: "warning"},
		{name: "malformed answer", answers: []answer{{status: 200, body: []byte{0xff, 0xff}}}, attempts: 1},
	}
	spans := record(t, resource.Empty(), func(tp trace.TracerProvider) {
		_, s := tp.Tracer("t").Start(context.Background(), "s")
		s.End()
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := &roundTrips{answers: tt.answers}
				e, err := New(Options{Endpoint: "https://user:password@collector.example/v1/traces", Timeout: 10 * time.Second,
					Client: &http.Client{Transport: rt}, Headers: map[string]string{"Authorization": "Bearer sekrit"}})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				err = e.ExportSpans(context.Background(), spans)
				switch {
				case tt.err == "" && err != nil:
					t.Fatalf("error %v", err)
				case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				case err != nil && (strings.Contains(err.Error(), "user") || strings.Contains(err.Error(), "sekrit")):
					t.Fatalf("the error shows a secret: %v", err)
				}
				if tt.attempts > 0 && len(rt.attempts) != tt.attempts {
					t.Errorf("%d attempts, want %d", len(rt.attempts), tt.attempts)
				}
				if tt.attempts == 0 && (len(rt.attempts) < 3 || time.Since(start) > 10*time.Second) {
					t.Errorf("%d attempts in %v: want several within the timeout", len(rt.attempts), time.Since(start))
				}
				if tt.waited > 0 && rt.attempts[1].Sub(rt.attempts[0]) != tt.waited {
					t.Errorf("waited %v before trying again, want %v", rt.attempts[1].Sub(rt.attempts[0]), tt.waited)
				}
				var pe *PartialSuccessError
				if tt.partial != nil && (!errors.As(err, &pe) || *pe != *tt.partial) {
					t.Errorf("error %#v, want %#v", err, tt.partial)
				}
			})
		})
	}
}

// A shut-down exporter refuses to export; an empty batch sends nothing;
// a bad endpoint is refused at once without its password.
func TestExporterEdges(t *testing.T) {
	rt := &roundTrips{answers: []answer{{status: 200}}}
	e, err := New(Options{Endpoint: "http://127.0.0.1:4318/v1/traces", Client: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), nil); err != nil || len(rt.attempts) != 0 {
		t.Errorf("empty batch: %v, %d attempts", err, len(rt.attempts))
	}
	e.Shutdown(context.Background())
	spans := record(t, resource.Empty(), func(tp trace.TracerProvider) {
		_, s := tp.Tracer("t").Start(context.Background(), "s")
		s.End()
	})
	if err := e.ExportSpans(context.Background(), spans); err == nil || len(rt.attempts) != 0 {
		t.Errorf("after shutdown: %v, %d attempts", err, len(rt.attempts))
	}
	for _, bad := range []string{"", "collector:4318", "ftp://u:hunter2@h/v1/traces", "http://u:hunter2@/x"} {
		if _, err := New(Options{Endpoint: bad}); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("endpoint %q: %v", bad, err)
		}
	}
}

// A program that put its own RoundTripper in http.DefaultTransport still
// gets working exporters (their transports are made from its settings,
// not cloned from it), and OTEL_EXPORTER_OTLP_CERTIFICATE lets one trust
// a receiver's own certificate authority.
func TestTLSAndReplacedDefaultTransport(t *testing.T) {
	saved := http.DefaultTransport
	defer func() { http.DefaultTransport = saved }()
	http.DefaultTransport = &roundTrips{answers: []answer{{status: 500}}}
	got := 0
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got++ }))
	defer recv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw})
	if err := os.WriteFile(ca, pemCert, 0o600); err != nil {
		t.Fatal(err)
	}
	spans := record(t, resource.Empty(), func(tp trace.TracerProvider) {
		_, s := tp.Tracer("t").Start(context.Background(), "s")
		s.End()
	})
	for _, tc := range []struct {
		env map[string]string
		err string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL, "OTEL_EXPORTER_OTLP_CERTIFICATE": ca}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}, "certificate"},
	} {
		o, err := OptionsFromEnv(func(k string) string { return tc.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		err = e.ExportSpans(context.Background(), spans)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CERTIFICATE %q: %v, want %q", tc.env["OTEL_EXPORTER_OTLP_CERTIFICATE"], err, tc.err)
		}
	}
	if got != 1 {
		t.Errorf("the receiver got %d exports, want 1", got)
	}
}
