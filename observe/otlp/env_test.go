package otlp

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
)

func TestOptionsFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Options
		err  string // the error contains it
	}{
		{name: "nothing", env: nil, err: "neither"},
		{name: "base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Options{Endpoint: "http://c:4318/v1/traces"}},
		{name: "base endpoint with a path", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c/otel/"},
			want: Options{Endpoint: "https://c/otel/v1/traces"}},
		{name: "traces endpoint as it is", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/custom"},
			want: Options{Endpoint: "http://t:1/custom"}},
		{name: "headers, timeout, gzip", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":    "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS":     " api-key = a%20b%2Cc , x-tenant=t ",
			"OTEL_EXPORTER_OTLP_TIMEOUT":     "2500",
			"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
			"OTEL_EXPORTER_OTLP_PROTOCOL":    "http/protobuf",
		}, want: Options{Endpoint: "http://c:4318/v1/traces", Headers: map[string]string{"Api-Key": "a b,c", "X-Tenant": "t"},
			Timeout: 2500 * time.Millisecond, Gzip: true}},
		{name: "the traces variables win", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":           "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS":            "a=1",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS":     "b=2",
			"OTEL_EXPORTER_OTLP_COMPRESSION":        "gzip",
			"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
			"OTEL_EXPORTER_OTLP_PROTOCOL":           "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":    "http/protobuf",
		}, want: Options{Endpoint: "http://c:4318/v1/traces", Headers: map[string]string{"B": "2"}}},
		{name: "grpc refused", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			err: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ferry exports traces over http/protobuf only"},
		{name: "bad header keeps its value", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%zzsekrit"},
			err: "OTEL_EXPORTER_OTLP_HEADERS: the value of Authorization is not percent-encoded right"},
		{name: "header without =", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=1,sekrit"},
			err: "OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 2 is not key=value"},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
			err: "OTEL_EXPORTER_OTLP_TIMEOUT=10s: not a number of milliseconds"},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
			err: "OTEL_EXPORTER_OTLP_COMPRESSION=zstd: gzip or none"},
		{name: "missing certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"},
			err: "OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent/ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OptionsFromEnv(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "sekrit") {
					t.Fatalf("error %v, want one saying %q and no secret", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Endpoint != tt.want.Endpoint || got.Timeout != tt.want.Timeout || got.Gzip != tt.want.Gzip ||
				!maps.Equal(got.Headers, tt.want.Headers) || got.Client != nil {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := OptionsFromEnv(func(string) string { return "" }); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("no endpoint: %v, want ErrNoEndpoint", err)
	}
}

// Decoders of what a receiver or the environment hands the exporter never
// panic, and an error about the headers never holds a header's value.
func FuzzAnswers(f *testing.F) {
	f.Add([]byte{}, "a=1,b=%20")
	f.Add(pb(1, pb(1, 5, 2, "m")), "x")
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, "=v")
	f.Fuzz(func(t *testing.T, answer []byte, headers string) {
		partialSuccess(answer)
		statusMessage("application/x-protobuf", answer)
		statusMessage("text/html", answer)
		if _, err := parseHeaders(headers); err != nil {
			for _, pair := range strings.Split(headers, ",") {
				_, v, _ := strings.Cut(pair, "=")
				if v = strings.TrimSpace(v); len(v) > 3 && strings.Contains(err.Error(), v) {
					t.Fatalf("the error %q holds the value %q", err, v)
				}
			}
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	spans := record(b, resource.Default(), func(tp trace.TracerProvider) {
		for range 100 {
			_, s := tp.Tracer("ferry").Start(context.Background(), "tools/call echo", trace.WithSpanKind(trace.SpanKindServer))
			s.End()
		}
	})
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendRequest(buf[:0], spans)
	}
	b.SetBytes(int64(len(buf)))
}
