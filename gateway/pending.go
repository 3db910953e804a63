package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// A pending request is a stateless client's request whose upstream call
// waits for the client's answer to a question of the server. The client
// got an input_required result whose requestState names it, and resumes
// it by retrying with its answers ("the client MUST echo back the exact
// value of that field when retrying").
//
// The upstream server may be legacy, waiting on a sampling request it
// sent over its own connection: the gateway keeps that call going between
// the client's rounds, for a bounded time.
type pending struct {
	set    *pendingSet
	token  string
	kind   string
	caller string // the ID of the caller that started it

	ctx       context.Context // the upstream call's, apart from any one client request
	cancel    context.CancelCauseFunc
	questions chan *question
	done      chan struct{} // closed once res and err are set
	res       any
	err       error

	seq    atomic.Int32
	open   map[string]*question // asked and not answered; the waiting round's
	expiry *time.Timer
}

// question is one question of the server waiting for the client's answer.
type question struct {
	key, method string
	params      jsontext.Value
	answer      chan jsontext.Value
}

// pendingSet holds the pending requests of a gateway.
type pendingSet struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	byKey map[string]*pending
	n     int // started and not finished
}

var errAbandoned = errors.New("the client did not retry the request in time")

// start runs call upstream as a pending request that may ask questions.
// Its context keeps the values of parent, the client request's (the
// trace its span is in, the caller), but not its cancellation or
// deadline: the call may outlive that request.
func (ps *pendingSet) start(parent context.Context, kind string, run func(ctx context.Context, p *pending) (any, error)) (*pending, error) {
	ps.mu.Lock()
	if ps.n >= ps.max {
		ps.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the gateway has too many requests waiting for their clients' answers (%d)", ps.max)
	}
	ps.n++
	ps.mu.Unlock()
	var b [18]byte
	rand.Read(b[:])
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	p := &pending{set: ps, token: "gw1." + base64.RawURLEncoding.EncodeToString(b[:]), kind: kind, caller: callerOf(parent),
		ctx: ctx, cancel: cancel, questions: make(chan *question), done: make(chan struct{}), open: map[string]*question{}}
	go func() {
		p.res, p.err = run(ctx, p)
		close(p.done)
		cancel(nil)
		ps.mu.Lock()
		ps.n--
		ps.mu.Unlock()
	}()
	return p, nil
}

// resume takes the pending request a retry names, with its answers. Only
// the caller that started it may (ctx is the retry's): to another, a
// requestState that leaked is unknown.
func (ps *pendingSet) resume(ctx context.Context, kind, state string, answers map[string]jsontext.Value) (*pending, error) {
	ps.mu.Lock()
	p := ps.byKey[state]
	if p != nil && p.caller != callerOf(ctx) {
		p = nil
	}
	if p != nil && p.kind == kind {
		delete(ps.byKey, state)
		p.expiry.Stop()
	}
	ps.mu.Unlock()
	if p == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown or expired requestState; send the request again without it")
	}
	if p.kind != kind {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "requestState belongs to another request")
	}
	for key, q := range p.open {
		if a, ok := answers[key]; ok && len(a) > 0 && string(a) != "null" {
			q.answer <- a
			delete(p.open, key)
		}
	}
	return p, nil
}

// park keeps p for the client's retry, for a bounded time.
func (ps *pendingSet) park(p *pending) {
	ps.mu.Lock()
	if ps.byKey == nil {
		ps.byKey = map[string]*pending{}
	}
	ps.byKey[p.token] = p
	p.expiry = time.AfterFunc(ps.ttl, func() {
		ps.mu.Lock()
		if ps.byKey[p.token] == p {
			delete(ps.byKey, p.token)
		}
		ps.mu.Unlock()
		p.cancel(errAbandoned)
	})
	ps.mu.Unlock()
}

// closeAll cancels every pending request (the gateway is stopping).
func (ps *pendingSet) closeAll(cause error) {
	ps.mu.Lock()
	list := make([]*pending, 0, len(ps.byKey))
	for _, p := range ps.byKey {
		list = append(list, p)
		p.expiry.Stop()
	}
	ps.byKey = nil
	ps.mu.Unlock()
	for _, p := range list {
		p.cancel(cause)
	}
}

// wait serves one round of a stateless client's request: the result once
// the upstream call ends, or an input_required result with the server's
// open questions.
func (p *pending) wait(ctx context.Context) (any, error) {
	if len(p.open) > 0 {
		return p.inputRequired(), nil
	}
	select {
	case <-p.done:
		return p.res, p.err
	case q := <-p.questions:
		p.open[q.key] = q
		// Questions asked together go out together.
		for more := true; more; {
			select {
			case q := <-p.questions:
				p.open[q.key] = q
			case <-time.After(time.Millisecond):
				more = false
			}
		}
		return p.inputRequired(), nil
	case <-ctx.Done():
		// The client is gone without a requestState to come back with.
		p.cancel(context.Cause(ctx))
		return nil, context.Cause(ctx)
	}
}

// inputRequired parks p and returns the result that asks the client.
func (p *pending) inputRequired() *protocol.InputRequiredResult {
	reqs := make(map[string]protocol.InputRequest, len(p.open))
	for key, q := range p.open {
		reqs[key] = protocol.InputRequest{Method: q.method, Params: q.params}
	}
	p.set.park(p)
	res := &protocol.InputRequiredResult{InputRequests: reqs, RequestState: p.token}
	res.ResultType = protocol.ResultInputRequired
	return res
}

// ask hands a question of the server to the client's next round and waits
// for its answer.
func (p *pending) ask(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
	q := &question{key: fmt.Sprintf("%s%d", questionPrefix(method), p.seq.Add(1)), method: method,
		params: params, answer: make(chan jsontext.Value, 1)}
	select {
	case p.questions <- q:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-p.ctx.Done():
		return nil, context.Cause(p.ctx)
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-p.ctx.Done():
		return nil, context.Cause(p.ctx)
	}
}
