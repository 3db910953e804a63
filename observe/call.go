package observe

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
)

// SendingMiddleware returns a client's sending middleware that observes
// every request the client sends to the server named server in the
// metrics: it starts a client span, puts the trace context into the
// request's _meta (intercept.Request.Meta) so that the server's spans
// join the trace, and counts the request and its time. A gateway installs
// it on its clients to its servers (through their client.Options).
func (o *Observer) SendingMiddleware(server string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			target, uri := targetOf(req)
			var span trace.Span
			if o.tracer != nil {
				attrs := appendTarget([]attribute.KeyValue{semconv.McpMethodNameKey.String(req.Method)}, req.Method, target, uri)
				ctx, span = o.tracer.Start(ctx, spanName(req.Method, target), clientSpan,
					trace.WithAttributes(append(attrs, attribute.String("mcp.server.name", server))...))
			}
			if hasContext(ctx) {
				if req.Meta == nil {
					req.Meta = protocol.Meta{}
				}
				o.prop.Inject(ctx, metaCarrier(req.Meta))
			}
			tool := toolLabel(req.Method, target)
			in := o.m.callingOf(methodKey{server, req.Method})
			in.Inc()
			start := time.Now()
			res, err := next(ctx, req)
			took := time.Since(start)
			in.Dec()
			outcome := outcomeOf(res, err)
			o.m.callsOf(outcomeKey{server: server, method: req.Method, tool: tool, outcome: outcome}).Inc()
			o.m.callTimeOf(toolKey{server, req.Method, tool}).Observe(took.Seconds())
			if span != nil {
				end(span, outcome, err)
			}
			o.logRequest(ctx, "call", server, req.Method, target, outcome, took, err)
			return res, err
		}
	}
}

// clientSpan is the option of Call's spans, made once.
var clientSpan = trace.WithSpanKind(trace.SpanKindClient)

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
