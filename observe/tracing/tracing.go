// Package tracing makes OpenTelemetry spans of the requests an MCP server
// serves and a client sends, and carries their trace context from process
// to process in the requests' _meta (traceparent and tracestate, as the
// MCP semantic conventions of OpenTelemetry have it). It links
// OpenTelemetry, not Prometheus; package observe puts it together with
// logs and metrics.
//
// The server middleware records, for every request, a span named
// "{mcp.method.name} {target}" (the target being the tool, the prompt or
// the resource) whose parent is the trace context the client sent in
// _meta; the sending middleware makes the client's span and puts the
// trace context into the request's _meta, so that a trace goes on into
// the server it calls.
package tracing

import (
	"bytes"
	"context"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe/internal/request"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// Options configure a [Tracing]. The zero value is usable.
type Options struct {
	// TracerProvider makes the spans; nil means OpenTelemetry's global
	// provider (a no-op one unless the program set another, for example
	// with [TracerProviderFromEnv]). With a [noop.TracerProvider], no
	// span is started at all: the trace context that came in still goes
	// on to the servers called.
	TracerProvider trace.TracerProvider
	// Propagator reads and writes the trace context of _meta; nil means
	// W3C Trace Context (traceparent, tracestate) and Baggage.
	Propagator propagation.TextMapPropagator
}

// Tracing makes the spans. Its methods are safe for concurrent use.
type Tracing struct {
	tracer trace.Tracer // nil: no spans
	prop   propagation.TextMapPropagator
}

// instrumentation is the name of the tracer.
const instrumentation = "github.com/ferrymcp/ferry/observe"

// New returns a Tracing of opts.TracerProvider.
func New(opts *Options) *Tracing {
	var o Options
	if opts != nil {
		o = *opts
	}
	t := &Tracing{prop: o.Propagator}
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if _, off := tp.(noop.TracerProvider); !off {
		t.tracer = tp.Tracer(instrumentation)
	}
	if t.prop == nil {
		t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return t
}

// Middleware returns receiving middleware that makes a span of every
// request of a server, child of the trace context in its _meta.
func (t *Tracing) Middleware() intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			served := server.RequestOf(req)
			if meta := metaOf(served); meta != nil {
				ctx = t.prop.Extract(ctx, metaCarrier(meta))
			}
			if t.tracer == nil {
				return next(ctx, req)
			}
			target, uri := request.Target(req)
			ctx, span := t.tracer.Start(ctx, spanName(req.Method, target), serverSpan,
				trace.WithAttributes(requestAttrs(req, served, target, uri)...))
			res, err := next(ctx, req)
			end(span, request.Outcome(res, err), err)
			return res, err
		}
	}
}

// SendingMiddleware returns a client's sending middleware that makes a
// client span of every request the client sends to the server named
// server, and puts the trace context into the request's _meta
// (intercept.Request.Meta) so that the server's spans join the trace.
func (t *Tracing) SendingMiddleware(server string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			var span trace.Span
			if t.tracer != nil {
				target, uri := request.Target(req)
				attrs := appendTarget([]attribute.KeyValue{semconv.McpMethodNameKey.String(req.Method)}, req.Method, target, uri)
				ctx, span = t.tracer.Start(ctx, spanName(req.Method, target), clientSpan,
					trace.WithAttributes(append(attrs, attribute.String("mcp.server.name", server))...))
			}
			if hasContext(ctx) {
				if req.Meta == nil {
					req.Meta = protocol.Meta{}
				}
				t.prop.Inject(ctx, metaCarrier(req.Meta))
			}
			res, err := next(ctx, req)
			if span != nil {
				end(span, request.Outcome(res, err), err)
			}
			return res, err
		}
	}
}

// LogAttrs returns the trace and span ids of the span context in ctx, for
// a log line (package observe/logs's Options.Attrs); none without one.
func LogAttrs(ctx context.Context) []slog.Attr {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []slog.Attr{slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String())}
}

// The options of the spans, made once.
var (
	serverSpan = trace.WithSpanKind(trace.SpanKindServer)
	clientSpan = trace.WithSpanKind(trace.SpanKindClient)
)

// requestAttrs are the attributes of a request's span.
func requestAttrs(req *intercept.Request, served *server.Request, target, uri string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.McpMethodNameKey.String(req.Method),
		semconv.McpProtocolVersion(req.ProtocolVersion),
		semconv.JSONRPCRequestID(req.ID.String()),
	}
	if id := request.SessionID(served); id != "" {
		attrs = append(attrs, semconv.McpSessionID(id))
	}
	return appendTarget(attrs, req.Method, target, uri)
}

// metaOf decodes a request's _meta when it may carry trace context.
func metaOf(req *server.Request) protocol.Meta {
	if req == nil || len(req.RawMeta) == 0 || !bytes.Contains(req.RawMeta, []byte("trace")) && !bytes.Contains(req.RawMeta, []byte("baggage")) {
		return nil
	}
	return req.Meta()
}

// hasContext reports whether ctx holds something to propagate: a span
// context (the call's span, or with tracing off the one that came in) or
// baggage. A request with neither gets no _meta for it.
func hasContext(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}

// metaCarrier reads and writes trace context in a _meta object. Values
// that are not strings are not trace context, and are left alone.
type metaCarrier protocol.Meta

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) {
	if m != nil {
		m[key] = value
	}
}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
