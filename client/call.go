package client

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

type progressKey struct{}
type timeoutKey struct{}

type timeouts struct{ idle, max time.Duration }

// WithProgress returns a context whose requests ask the server for
// progress and pass each notification to fn.
func WithProgress(ctx context.Context, fn func(p *protocol.ProgressParams)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// WithTimeout returns a context whose requests time out after idle without
// an answer or a progress notification, and after max in any case. Zero
// disables either bound; this overrides [Options.RequestTimeout] and
// [Options.MaxRequestTimeout].
func WithTimeout(ctx context.Context, idle, max time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, timeouts{idle, max})
}

// TimeoutError reports a request that got no answer in time.
type TimeoutError struct {
	Method string
	After  time.Duration
	// Idle is true when the request timed out for lack of progress, false
	// when it hit its maximum duration.
	Idle bool
}

func (e *TimeoutError) Error() string {
	if e.Idle {
		return fmt.Sprintf("%s: no answer or progress for %v", e.Method, e.After)
	}
	return fmt.Sprintf("%s: no answer within %v", e.Method, e.After)
}

// Timeout lets callers test the error like a net.Error.
func (e *TimeoutError) Timeout() bool { return true }

// Unwrap makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// callState is the progress and timeout bookkeeping of one request.
type callState struct {
	onProgress func(*protocol.ProgressParams)
	timer      *time.Timer
	idle       time.Duration
}

// call sends a request built by build (which receives the _meta to put in
// its params) and waits for the answer, applying the timeouts and
// progress routing of ctx and the client's options.
func (c *Client) call(ctx context.Context, method string, user protocol.Meta, build func(meta wireMeta) any) (*jsonrpc.Message, error) {
	to := timeouts{c.opts.RequestTimeout, c.opts.MaxRequestTimeout}
	if v, ok := ctx.Value(timeoutKey{}).(timeouts); ok {
		to = v
	}
	onProgress, _ := ctx.Value(progressKey{}).(func(*protocol.ProgressParams))
	meta := wireMeta{c: c, user: user, tasks: acceptsTasks(ctx)}
	if to.idle <= 0 && onProgress == nil && c.opts.OnProgress == nil {
		return c.send(ctx, method, build(meta), to.max)
	}

	var cancel context.CancelCauseFunc
	ctx, cancel = context.WithCancelCause(ctx)
	defer cancel(nil)
	st := &callState{onProgress: onProgress, idle: to.idle}
	if to.idle > 0 {
		st.timer = time.AfterFunc(to.idle, func() {
			cancel(&TimeoutError{Method: method, After: to.idle, Idle: true})
		})
		defer st.timer.Stop()
	}
	meta.token = c.nextToken.Add(1)
	key := strconv.FormatInt(meta.token, 10)
	c.mu.Lock()
	c.progress[key] = st
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.progress, key)
		c.mu.Unlock()
	}()
	return c.send(ctx, method, build(meta), to.max)
}

// send makes the call, bounded by max when it is positive: the
// connection's deadlines carry the bound, which costs less than a context
// with a deadline per call.
func (c *Client) send(ctx context.Context, method string, params any, max time.Duration) (*jsonrpc.Message, error) {
	if max <= 0 {
		return c.request(ctx, method, params, nil)
	}
	if o := c.maxBound; o != nil && max == o.Timeout {
		return c.request(ctx, method, params, o)
	}
	return c.request(ctx, method, params, &jsonrpcapi.CallOptions{Timeout: max, TimeoutErr: timeoutError})
}

// timeoutError is the *TimeoutError of a call bounded by send.
func timeoutError(method string, after time.Duration) error {
	return &TimeoutError{Method: method, After: after}
}

// onProgress routes a progress notification to its request, and resets
// that request's idle timer: "Implementations MAY choose to reset the
// timeout clock when receiving a progress notification".
func (c *Client) onProgress(p *protocol.ProgressParams) {
	c.mu.Lock()
	st := c.progress[string(p.ProgressToken)]
	c.mu.Unlock()
	if st != nil {
		if st.timer != nil {
			st.timer.Reset(st.idle)
		}
		if st.onProgress != nil {
			st.onProgress(p)
		}
	}
	if f := c.opts.OnProgress; f != nil {
		f(p)
	}
}

// wireMeta is the _meta of an outgoing request: for a stateless server the
// per-request protocol fields ("Every request supplies this metadata in
// its _meta field"), a progress token when progress is wanted, and the
// caller's own members.
type wireMeta struct {
	c     *Client
	user  protocol.Meta
	token int64
	tasks bool // declare the tasks extension (see tasks.go)
}

// plus returns m, of client c, with added's members over the caller's
// own, in a map of its own.
func (m wireMeta) plus(c *Client, added protocol.Meta) wireMeta {
	user := make(protocol.Meta, len(m.user)+len(added))
	maps.Copy(user, m.user)
	maps.Copy(user, added)
	m.c, m.user = c, user
	return m
}

// IsZero lets omitzero drop an empty _meta.
func (m wireMeta) IsZero() bool {
	return m.c == nil || (!m.c.stateless && m.token == 0 && len(m.user) == 0)
}

// MarshalJSONTo writes the members without building a map.
func (m wireMeta) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	var seen [5]string
	n := 0
	write := func(k string, v jsontext.Value) error {
		seen[n] = k
		n++
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return err
		}
		return enc.WriteValue(v)
	}
	if m.c.stateless {
		if err := write(protocol.MetaProtocolVersion, quote(m.c.version)); err != nil {
			return err
		}
		info, _ := json.Marshal(&m.c.opts.Info)
		if err := write(protocol.MetaClientInfo, info); err != nil {
			return err
		}
		caps := m.c.capsJSON
		if m.tasks {
			caps = m.c.taskCapsJSON()
		}
		if err := write(protocol.MetaClientCapabilities, caps); err != nil {
			return err
		}
		if lvl := *m.c.logLevel.Load(); lvl != "" {
			if err := write(protocol.MetaLogLevel, quote(string(lvl))); err != nil {
				return err
			}
		}
	}
	if m.token != 0 {
		if err := write(protocol.MetaProgressToken, strconv.AppendInt(nil, m.token, 10)); err != nil {
			return err
		}
	}
	for k, v := range m.user {
		dup := false
		for _, s := range seen[:n] {
			dup = dup || s == k
		}
		if dup {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, v); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

func quote(s string) jsontext.Value {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}

// metaParams puts a _meta in front of any params object.
type metaParams struct {
	Meta wireMeta       `json:"_meta,omitzero"`
	Rest jsontext.Value `json:",embed"`
}

// Mirror gives an HTTP transport the protocol version to mirror into the
// MCP-Protocol-Version header of a stateless request (the transport finds
// Mcp-Name in the params itself).
func (p *metaParams) Mirror(set func(name, value string)) {
	if p.Meta.c != nil && p.Meta.c.stateless {
		set("Mcp-Protocol-Version", p.Meta.c.version)
	}
}

// withMeta returns params (a struct whose own Meta is already moved into
// meta.user) with the request's _meta added.
func (c *Client) withMeta(params any, user protocol.Meta) any {
	return c.paramsWith(wireMeta{c: c, user: user}, params)
}

func (c *Client) paramsWith(meta wireMeta, params any) any {
	var rest jsontext.Value
	if params != nil {
		raw, err := json.Marshal(params)
		if err == nil {
			// A _meta of the params' own (a custom method's) joins the
			// one written, rather than being a second member of that name.
			var own protocol.Meta
			if rest, own, err = splitMeta(raw); err != nil {
				rest = raw
			} else if len(own) > 0 {
				meta = wireMeta{user: own}.plus(c, meta.user)
			}
		}
	}
	if meta.IsZero() {
		if rest == nil {
			return nil
		}
		return rest
	}
	return &metaParams{Meta: meta, Rest: rest}
}
