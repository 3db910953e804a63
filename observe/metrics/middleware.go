package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/observe/internal/request"
)

// Middleware returns receiving middleware that counts and times every
// request of a server, named name in the metrics.
func (m *Metrics) Middleware(name string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			target, _ := request.Target(req)
			tool := request.Tool(req.Method, target)
			in := m.inflightOf(methodKey{name, req.Method})
			in.Inc()
			start := time.Now()
			res, err := next(ctx, req)
			took := time.Since(start)
			in.Dec()
			method := req.Method
			if err != nil {
				// Names the server does not know must not become labels: a
				// client could make series without bound.
				if tool != "" && invalid(err) {
					tool = ""
				}
				if unknownMethod(err) {
					method = otherMethod
					m.dropInflight(methodKey{name, req.Method})
				}
			}
			m.requestsOf(outcomeKey{name, method, tool, request.Era(req), request.Outcome(res, err)}).Inc()
			m.durationOf(toolKey{name, method, tool}).Observe(took.Seconds())
			return res, err
		}
	}
}

// SendingMiddleware returns a client's sending middleware that counts and
// times every request the client sends to the server named server.
func (m *Metrics) SendingMiddleware(server string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			target, _ := request.Target(req)
			tool := request.Tool(req.Method, target)
			in := m.callingOf(methodKey{server, req.Method})
			in.Inc()
			start := time.Now()
			res, err := next(ctx, req)
			took := time.Since(start)
			in.Dec()
			m.callsOf(outcomeKey{server: server, method: req.Method, tool: tool, outcome: request.Outcome(res, err)}).Inc()
			m.callTimeOf(toolKey{server, req.Method, tool}).Observe(took.Seconds())
			return res, err
		}
	}
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
