package limit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// CodeLimited is the JSON-RPC error code of a call refused by a limit
// (in the range JSON-RPC leaves to servers; 429 as in HTTP). Its data is
// an object: "limit" names the rule, "retryAfter" is the seconds to wait
// (rounded up; 1 for a concurrency limit, whose calls in flight may end
// any time), "retryAfterMs" the same in milliseconds.
const CodeLimited = -32029

// Middleware is the limiter's MCP middleware (for
// gateway.Options.Middleware): it counts each tools/call against the
// rules that name its tool and the concurrency limits, and refuses one
// over a limit with a [CodeLimited] error. Without rules it passes every
// request on after one atomic load.
func (l *Limiter) Middleware(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
		p := l.policy.Load()
		if p == nil || len(p.calls) == 0 || req.Method != protocol.MethodToolsCall {
			return next(ctx, req)
		}
		q := l.callRequest(ctx, p, req)
		release, ref := l.admitCall(ctx, p, q)
		if ref != nil {
			return intercept.Result{}, refusalError(ref)
		}
		defer release()
		return next(ctx, req)
	}
}

// requestAddr is the address of the client that sent req, "" for a
// request the server did not receive.
func requestAddr(req *intercept.Request) string {
	if r := server.RequestOf(req); r != nil {
		return r.RemoteAddr()
	}
	return ""
}

// callRequest is what the rules match a tools/call by: its caller, its
// view, and its tool as the gateway's aggregated endpoint names it
// (SERVER__TOOL), whichever endpoint it came to (/mcp,
// /servers/NAME/mcp, a view, which may rename it).
func (l *Limiter) callRequest(ctx context.Context, p *Policy, req *intercept.Request) *request {
	key, ids := callerOf(ctx, intercept.ClientKey(ctx, requestAddr(req)))
	q := &request{caller: key, ids: ids, tool: req.Name()}
	ep := gateway.EndpointOf(ctx)
	if ep == nil {
		return q
	}
	q.view = ep.View
	if p.tools {
		if server, name, ok := ep.Resolver(ctx, req, protocol.MethodToolsCall)(req.Name()); ok {
			q.tool = server + ep.Separator() + name
		}
	}
	return q
}

// admitCall counts q against the concurrency limits, then the rates:
// the function it returns ends the call's count.
func (l *Limiter) admitCall(ctx context.Context, p *Policy, q *request) (func(), *Refusal) {
	var slots []Slot
	var named []*rule
	for _, r := range p.calls {
		if r.conc > 0 && r.matches(q) {
			slots = append(slots, Slot{Key: r.key(q), Limit: r.conc})
			named = append(named, r)
		}
	}
	release := func() {}
	if len(slots) > 0 {
		var ref *Refusal
		if release, ref = l.acquire(ctx, p, slots, named); ref != nil {
			return nil, ref
		}
	}
	if ref := l.takeRates(ctx, p, p.calls, q); ref != nil {
		release()
		return nil, ref
	}
	return release, nil
}

// refusalError is the JSON-RPC error of a refused call.
func refusalError(ref *Refusal) *jsonrpc.Error {
	e := jsonrpc.NewError(CodeLimited, "%s", ref.Error())
	wait := ref.RetryAfter
	if wait <= 0 {
		wait = time.Second
	}
	e.Data, _ = json.Marshal(struct {
		Limit        string `json:"limit,omitempty"`
		RetryAfter   int64  `json:"retryAfter"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}{ref.Rule, retrySeconds(wait), wait.Milliseconds()})
	return e
}
