package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/observe/internal/request"
	"github.com/ferrymcp/ferry/protocol"
)

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
	case outcome == request.ToolError:
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

// spanName is "{mcp.method.name} {target}", or the method alone.
func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
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
