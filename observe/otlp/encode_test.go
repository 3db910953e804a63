package otlp

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// record runs f with a tracer provider of the given resource and returns
// the spans it ended.
func record(t testing.TB, res *resource.Resource, f func(tp trace.TracerProvider)) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res))
	f(tp)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec.Ended()
}

// decode reads an export as a receiver does, with the generated code of
// opentelemetry-proto.
func decode(t testing.TB, b []byte) *coltrace.ExportTraceServiceRequest {
	t.Helper()
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("the export is not an ExportTraceServiceRequest: %v", err)
	}
	return &req
}

var remote = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	SpanID:     trace.SpanID{0x0b, 1, 2, 3, 4, 5, 6, 7},
	TraceFlags: trace.FlagsSampled,
	Remote:     true,
})

// Every attribute kind, events, links, the status, the parent and the
// flags reach the receiver as OpenTelemetry's own exporter sends them.
func TestEncodeSpanFields(t *testing.T) {
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "svc"))
	long := strings.Repeat("x", 20000) // lengths of three bytes
	mid := strings.Repeat("y", 300)    // and of two
	spans := record(t, res, func(tp trace.TracerProvider) {
		tr := tp.Tracer("scope", trace.WithInstrumentationVersion("1.2"), trace.WithSchemaURL("https://s"),
			trace.WithInstrumentationAttributes(attribute.Bool("scoped", true)))
		ts, _ := trace.ParseTraceState("k=v")
		ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote.WithTraceState(ts))
		_, s := tr.Start(ctx, "tools/call echo", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.Int("n", 1)}}))
		s.SetAttributes(
			attribute.String("s", ""), attribute.String("long", long), attribute.String("mid", mid), attribute.Bool("b", false),
			attribute.Int64("i", -7), attribute.Float64("f", 2.5),
			attribute.StringSlice("ss", []string{"a", ""}), attribute.Int64Slice("is", []int64{1, -2}),
			attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{true, false}),
			attribute.KeyValue{Key: "bytes", Value: attribute.ByteSliceValue([]byte{0, 1})},
			attribute.KeyValue{Key: "slice", Value: attribute.SliceValue(attribute.StringValue("x"), attribute.Int64Value(3))},
			attribute.KeyValue{Key: "map", Value: attribute.MapValue(attribute.String("in", "side"))},
			attribute.KeyValue{Key: "empty"},
		)
		s.AddEvent("progress", trace.WithAttributes(attribute.Int("done", 3)))
		s.SetStatus(codes.Error, "tool failed")
		s.End()
	})
	got := decode(t, appendRequest(nil, spans))
	ro := spans[0]
	tid, sid := ro.SpanContext().TraceID(), ro.SpanContext().SpanID()
	remoteTrace := remote.TraceID()
	sv := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	iv := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	bv := func(b bool) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
	}
	fv := func(f float64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
	}
	arr := func(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	want := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", sv("svc"))}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope:     &commonpb.InstrumentationScope{Name: "scope", Version: "1.2", Attributes: []*commonpb.KeyValue{kv("scoped", bv(true))}},
			SchemaUrl: "https://s",
			Spans: []*tracepb.Span{{
				TraceId: tid[:], SpanId: sid[:], TraceState: "k=v", ParentSpanId: []byte{0x0b, 1, 2, 3, 4, 5, 6, 7},
				Flags: 0x301, Name: "tools/call echo", Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: uint64(ro.StartTime().UnixNano()), EndTimeUnixNano: uint64(ro.EndTime().UnixNano()),
				Attributes: []*commonpb.KeyValue{
					kv("s", sv("")), kv("long", sv(long)), kv("mid", sv(mid)), kv("b", bv(false)), kv("i", iv(-7)), kv("f", fv(2.5)),
					kv("ss", arr(sv("a"), sv(""))), kv("is", arr(iv(1), iv(-2))), kv("fs", arr(fv(0.5))),
					kv("bs", arr(bv(true), bv(false))),
					kv("bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1}}}),
					kv("slice", arr(sv("x"), iv(3))),
					kv("map", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{kv("in", sv("side"))}}}}),
					kv("empty", &commonpb.AnyValue{}),
				},
				Events: []*tracepb.Span_Event{{TimeUnixNano: uint64(ro.Events()[0].Time.UnixNano()), Name: "progress",
					Attributes: []*commonpb.KeyValue{kv("done", iv(3))}}},
				Links: []*tracepb.Span_Link{{TraceId: remoteTrace[:], SpanId: []byte{0x0b, 1, 2, 3, 4, 5, 6, 7},
					Attributes: []*commonpb.KeyValue{kv("n", iv(1))}, Flags: 0x301}},
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "tool failed"},
			}},
		}},
	}}}
	if !proto.Equal(want, got) {
		t.Errorf("export:\n%s\nwant:\n%s", prototext.Format(got), prototext.Format(want))
	}
}
