package observe

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// Middleware returns receiving middleware that observes every request of
// a server, named name in the metrics.
func (o *Observer) Middleware(name string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			target, uri := targetOf(req)
			served := server.RequestOf(req)
			if meta := metaOf(served); meta != nil {
				ctx = o.prop.Extract(ctx, metaCarrier(meta))
			}
			var span trace.Span
			if o.tracer != nil {
				ctx, span = o.tracer.Start(ctx, spanName(req.Method, target), serverSpan,
					trace.WithAttributes(requestAttrs(req, served, target, uri)...))
			}
			tool := toolLabel(req.Method, target)
			in := o.m.inflightOf(methodKey{name, req.Method})
			in.Inc()
			start := time.Now()
			res, err := next(ctx, req)
			took := time.Since(start)
			in.Dec()
			outcome := outcomeOf(res, err)
			method := req.Method
			if err != nil {
				// Names the server does not know must not become labels: a
				// client could make series without bound.
				if tool != "" && invalid(err) {
					tool = ""
				}
				if unknownMethod(err) {
					method = otherMethod
					o.m.dropInflight(methodKey{name, req.Method})
				}
			}
			o.m.requestsOf(outcomeKey{name, method, tool, eraOf(req), outcome}).Inc()
			o.m.durationOf(toolKey{name, method, tool}).Observe(took.Seconds())
			if span != nil {
				end(span, outcome, err)
			}
			o.logRequest(ctx, "request", name, req.Method, target, outcome, took, err,
				slog.String("era", eraOf(req)), slog.String("session", sessionID(served)))
			return res, err
		}
	}
}

// serverSpan is the option of the server middleware's spans, made once.
var serverSpan = trace.WithSpanKind(trace.SpanKindServer)

// requestAttrs are the attributes of a request's span.
func requestAttrs(req *intercept.Request, served *server.Request, target, uri string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.McpMethodNameKey.String(req.Method),
		semconv.McpProtocolVersion(req.ProtocolVersion),
		semconv.JSONRPCRequestID(req.ID.String()),
	}
	if id := sessionID(served); id != "" {
		attrs = append(attrs, semconv.McpSessionID(id))
	}
	return appendTarget(attrs, req.Method, target, uri)
}

func eraOf(req *intercept.Request) string {
	if req.Stateless {
		return "stateless"
	}
	return "legacy"
}

func sessionID(req *server.Request) string {
	if req == nil || req.Session == nil {
		return ""
	}
	return req.Session.ID
}

// metaOf decodes a request's _meta when it may carry trace context.
func metaOf(req *server.Request) protocol.Meta {
	if req == nil || len(req.RawMeta) == 0 || !bytes.Contains(req.RawMeta, []byte("trace")) && !bytes.Contains(req.RawMeta, []byte("baggage")) {
		return nil
	}
	return req.Meta()
}

// end finishes a span with the outcome.
func end(span trace.Span, outcome string, err error) {
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			span.SetAttributes(semconv.RPCResponseStatusCode(itoa(rpc.Code)))
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	case outcome == outcomeToolError:
		span.SetStatus(codes.Error, "tool error")
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
	}
	span.End()
}

// errorType is the error.type of a failed request: the JSON-RPC code, or
// the kind of failure.
func errorType(err error) string {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return itoa(rpc.Code)
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "_OTHER"
}

func itoa(n int64) string {
	var b [24]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// otherMethod is the method label of the requests of methods the server
// does not serve.
const otherMethod = "other"

// unknownMethod reports a request of a method the server does not serve.
func unknownMethod(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound
}

// invalid reports a request the server refused as malformed or unknown.
func invalid(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && (rpc.Code == jsonrpc.CodeInvalidParams || rpc.Code == jsonrpc.CodeMethodNotFound)
}

// outcomeOf classifies a request's result. A tools/call result passed
// on undecoded (a jsontext.Value, as a gateway forwards it and a client's
// middleware sees it) is a tool error as res.IsError says: whoever made
// it found its isError on the way, and a 64 KiB result is not walked
// again here.
func outcomeOf(res intercept.Result, err error) string {
	if err != nil {
		return outcomeError
	}
	if res.IsError {
		return outcomeToolError
	}
	switch r := res.Value.(type) {
	case *protocol.CallToolResult:
		if r.IsError {
			return outcomeToolError
		}
	case *protocol.InputRequiredResult:
		return outcomeInputRequired
	}
	return outcomeOK
}

// spanName is "{mcp.method.name} {target}", or the method alone.
func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// toolLabel is the tool (or prompt) a request names, for the metrics.
func toolLabel(method, target string) string {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		return target
	}
	return ""
}

func appendTarget(attrs []attribute.KeyValue, method, target, uri string) []attribute.KeyValue {
	switch {
	case method == protocol.MethodToolsCall && target != "":
		attrs = append(attrs, semconv.GenAIToolName(target))
	case method == protocol.MethodPromptsGet && target != "":
		attrs = append(attrs, semconv.GenAIPromptName(target))
	}
	if uri != "" {
		attrs = append(attrs, semconv.McpResourceURI(uri))
	}
	return attrs
}

// targetOf is the name (tools/call, prompts/get) or the URI
// (resources/*) a request names, as the server decodes it.
func targetOf(req *intercept.Request) (name, uri string) {
	switch req.Method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		return req.Name(), ""
	case protocol.MethodResourcesRead, protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		return "", req.Name()
	}
	return "", ""
}

// logRequest writes a request's line: at Debug when it went well, at
// Warn when it failed.
func (o *Observer) logRequest(ctx context.Context, msg, server, method, target, outcome string, took time.Duration, err error, extra ...slog.Attr) {
	level := slog.LevelDebug
	if err != nil {
		level = slog.LevelWarn
	}
	if !o.log.Enabled(ctx, level) {
		return
	}
	attrs := append([]slog.Attr{
		slog.String("server", server), slog.String("method", method),
		slog.String("outcome", outcome), slog.Duration("took", took),
	}, extra...)
	if target != "" {
		attrs = append(attrs, slog.String("target", target))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	o.log.LogAttrs(ctx, level, msg, attrs...)
}
