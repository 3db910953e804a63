package observe

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/rawresult"
	"github.com/ferrymcp/ferry/protocol"
)

// Outgoing is a request a client sends, as [Observer.Call] sees it.
type Outgoing struct {
	// Server names the server it goes to, in the metrics.
	Server string
	// Method is the request's method; Name the tool or prompt, or the
	// resource's URI.
	Method, Name string
	// Meta is the request's _meta, into which Call writes the trace
	// context (it makes the map when it is nil).
	Meta *protocol.Meta
}

// Call observes a request a client sends: it starts a client span, puts
// its trace context into the request's _meta so that the server's spans
// join the trace, and counts the request and its time. send sends it and
// returns its result.
func (o *Observer) Call(ctx context.Context, out *Outgoing, send func(ctx context.Context) (any, error)) (any, error) {
	target, uri := out.Name, ""
	if out.Method != protocol.MethodToolsCall && out.Method != protocol.MethodPromptsGet {
		target, uri = "", out.Name
	}
	var span trace.Span
	if o.tracer != nil {
		attrs := appendTarget([]attribute.KeyValue{semconv.McpMethodNameKey.String(out.Method)}, out.Method, target, uri)
		ctx, span = o.tracer.Start(ctx, spanName(out.Method, target), clientSpan,
			trace.WithAttributes(append(attrs, attribute.String("mcp.server.name", out.Server))...))
	}
	if out.Meta != nil && hasContext(ctx) {
		if *out.Meta == nil {
			*out.Meta = protocol.Meta{}
		}
		o.prop.Inject(ctx, metaCarrier(*out.Meta))
	}
	tool := toolLabel(out.Method, target)
	in := o.m.callingOf(methodKey{out.Server, out.Method})
	in.Inc()
	start := time.Now()
	res, err := send(ctx)
	took := time.Since(start)
	in.Dec()
	var outcome string
	if out.Method == protocol.MethodToolsCall {
		// The raw result of a call forwarding a tools/call: the gateway
		// may know it, and the observing middleware of the request
		// forwarded will want to (see rawresult).
		memo := rawresult.Of(ctx)
		outcome = memoOutcome(memo, intercept.Result{Value: res}, err)
		remember(memo, res, err, outcome)
	} else {
		outcome = outcomeOf(res, err)
	}
	o.m.callsOf(outcomeKey{server: out.Server, method: out.Method, tool: tool, outcome: outcome}).Inc()
	o.m.callTimeOf(toolKey{out.Server, out.Method, tool}).Observe(took.Seconds())
	if span != nil {
		end(span, outcome, err)
	}
	o.logRequest(ctx, "call", out.Server, out.Method, target, outcome, took, err)
	return res, err
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
