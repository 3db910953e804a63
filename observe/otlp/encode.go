package otlp

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers below are those of opentelemetry-proto's
// collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
// common/v1/common.proto and resource/v1/resource.proto. The messages are
// written field by field with protowire rather than through the generated
// Go types, whose package for the collector service links gRPC into every
// program that exports over HTTP (open-telemetry/opentelemetry-go#2579).

// Span flags of trace.proto: the low byte is the W3C trace flags; these
// say whether the parent (or a link's span) is remote, and that this is
// known.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// appendRequest appends an ExportTraceServiceRequest holding spans,
// grouped by resource and then by instrumentation scope in the order they
// first appear.
func appendRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	for _, rg := range group(spans) {
		b = appendMessage(b, 1, func(b []byte) []byte { return appendResourceSpans(b, rg) })
	}
	return b
}

// resourceGroup and scopeGroup are the spans of one resource and, within
// it, of one instrumentation scope.
type resourceGroup struct {
	first  sdktrace.ReadOnlySpan // for the resource they share
	scopes []*scopeGroup
}

type scopeGroup struct {
	spans []sdktrace.ReadOnlySpan
}

type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

func group(spans []sdktrace.ReadOnlySpan) []*resourceGroup {
	var groups []*resourceGroup
	byResource := map[attribute.Distinct]*resourceGroup{}
	byScope := map[attribute.Distinct]map[scopeKey]*scopeGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		rk := s.Resource().Equivalent()
		rg := byResource[rk]
		if rg == nil {
			rg = &resourceGroup{first: s}
			byResource[rk] = rg
			byScope[rk] = map[scopeKey]*scopeGroup{}
			groups = append(groups, rg)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		sg := byScope[rk][sk]
		if sg == nil {
			sg = &scopeGroup{}
			byScope[rk][sk] = sg
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	return groups
}

func appendResourceSpans(b []byte, rg *resourceGroup) []byte {
	res := rg.first.Resource()
	b = appendMessage(b, 1, func(b []byte) []byte { return appendAttributes(b, 1, res.Attributes()) })
	for _, sg := range rg.scopes {
		b = appendMessage(b, 2, func(b []byte) []byte { return appendScopeSpans(b, sg) })
	}
	return appendString(b, 3, res.SchemaURL())
}

func appendScopeSpans(b []byte, sg *scopeGroup) []byte {
	sc := sg.spans[0].InstrumentationScope()
	b = appendMessage(b, 1, func(b []byte) []byte {
		b = appendString(b, 1, sc.Name)
		b = appendString(b, 2, sc.Version)
		return appendAttributes(b, 3, sc.Attributes.ToSlice())
	})
	for _, s := range sg.spans {
		b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
	}
	return appendString(b, 3, sc.SchemaURL)
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	b = appendSpanContext(b, 1, 2, 3, sc)
	if p := s.Parent(); p.SpanID().IsValid() {
		id := p.SpanID()
		b = appendBytes(b, 4, id[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, uint64(spanKind(s.SpanKind())))
	b = appendTime(b, 7, s.StartTime())
	b = appendTime(b, 8, s.EndTime())
	b = appendAttributes(b, 9, s.Attributes())
	b = appendVarint(b, 10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte { return appendEvent(b, e) })
	}
	b = appendVarint(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte { return appendLink(b, l) })
	}
	b = appendVarint(b, 14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		b = appendMessage(b, 15, func(b []byte) []byte { return appendStatus(b, st) })
	}
	return appendFixed32(b, 16, spanFlags(sc.TraceFlags(), s.Parent()))
}

func appendSpanContext(b []byte, traceField, spanField, stateField protowire.Number, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	if tid.IsValid() {
		b = appendBytes(b, traceField, tid[:])
	}
	if sid.IsValid() {
		b = appendBytes(b, spanField, sid[:])
	}
	return appendString(b, stateField, sc.TraceState().String())
}

func appendEvent(b []byte, e sdktrace.Event) []byte {
	b = appendTime(b, 1, e.Time)
	b = appendString(b, 2, e.Name)
	b = appendAttributes(b, 3, e.Attributes)
	return appendVarint(b, 4, uint64(e.DroppedAttributeCount))
}

func appendLink(b []byte, l sdktrace.Link) []byte {
	b = appendSpanContext(b, 1, 2, 3, l.SpanContext)
	b = appendAttributes(b, 4, l.Attributes)
	b = appendVarint(b, 5, uint64(l.DroppedAttributeCount))
	return appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
}

func appendStatus(b []byte, st sdktrace.Status) []byte {
	code := uint64(1) // STATUS_CODE_OK
	if st.Code == codes.Error {
		code = 2 // STATUS_CODE_ERROR; only an error has a message
		b = appendString(b, 2, st.Description)
	}
	return appendVarint(b, 3, code)
}

// spanFlags are the W3C flags and whether remote is: the parent of a
// span, or the span a link points at.
func spanFlags(tf trace.TraceFlags, remote trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if remote.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind maps OpenTelemetry's span kinds to trace.proto's; the numbers
// agree, an unknown kind is SPAN_KIND_UNSPECIFIED.
func spanKind(k trace.SpanKind) trace.SpanKind {
	if k > trace.SpanKindConsumer {
		return trace.SpanKindUnspecified
	}
	return k
}

// appendAttributes appends each attribute as a KeyValue in field num.
func appendAttributes(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, num, func(b []byte) []byte { return appendKeyValue(b, string(kv.Key), kv.Value) })
	}
	return b
}

func appendKeyValue(b []byte, key string, v attribute.Value) []byte {
	b = appendString(b, 1, key)
	return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, v) })
}

// appendAnyValue appends the one field of an AnyValue. Its fields are a
// oneof, so a zero value is written too: its presence says the type.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.MAP:
		return appendMessage(b, 6, func(b []byte) []byte { return appendAttributes(b, 1, v.AsMap()) })
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.SLICE:
		return appendMessage(b, 5, func(b []byte) []byte { return appendArray(b, v) })
	}
	return b // EMPTY: an AnyValue with no field set
}

// appendArray appends the values of an ArrayValue.
func appendArray(b []byte, v attribute.Value) []byte {
	for _, e := range elements(v) {
		b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyValue(b, e) })
	}
	return b
}

func elements(v attribute.Value) []attribute.Value {
	switch v.Type() {
	case attribute.BOOLSLICE:
		return convert(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return convert(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return convert(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return convert(v.AsStringSlice(), attribute.StringValue)
	}
	return v.AsSlice()
}

func convert[T any](s []T, f func(T) attribute.Value) []attribute.Value {
	out := make([]attribute.Value, len(s))
	for i, e := range s {
		out[i] = f(e)
	}
	return out
}

// appendMessage appends a length-delimited field whose bytes body
// appends. The length is written before the body is known: one byte is
// kept for it, and the body moved up in the rare case it needs more.
func appendMessage(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = body(append(b, 0))
	n := uint64(len(b) - at - 1)
	size := protowire.SizeVarint(n)
	if size > 1 {
		var room [9]byte
		b = append(b, room[:size-1]...)
		copy(b[at+size:], b[at+1:len(b)-size+1])
	}
	protowire.AppendVarint(b[:at], n)
	return b
}

// The appenders below leave out a zero value, as proto3 does for fields
// that are not part of a oneof.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// appendTime appends t in nanoseconds since the Unix epoch; the zero time
// is left out.
func appendTime(b []byte, num protowire.Number, t time.Time) []byte {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, uint64(t.UnixNano()))
}
