// Package audit writes one record per call a gateway serves
// (tools/call, prompts/get, resources/read): when, who, through which
// endpoint, to which server and tool, a digest of the arguments, the
// outcome and how long it took, as a JSON line. No credential is ever in
// it: the caller is named by its name or subject, never by its token,
// and the arguments are only digested unless the configuration asks for
// them ([config.Audit]).
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Record is one call, as written.
type Record struct {
	Time time.Time `json:"time"`
	// Caller names who called: a token file's caller, a token's subject,
	// else the caller's ID; Issuer is the token's issuer. Empty without
	// authentication.
	Caller string `json:"caller,omitempty"`
	Issuer string `json:"issuer,omitempty"`
	// View is the view called through, if any; Server the server that
	// served the call.
	View   string `json:"view,omitempty"`
	Server string `json:"server,omitempty"`
	// Method is tools/call, prompts/get or resources/read; Name the
	// tool, prompt or resource URI as the client named it; Tool the
	// server's own name for it, when the endpoint renamed it.
	Method string `json:"method"`
	Name   string `json:"name"`
	Tool   string `json:"tool,omitempty"`
	// ArgumentsSHA256 is the digest of the arguments in their canonical
	// form (RFC 8785), which tells equal arguments without showing them;
	// Arguments are the arguments, only when the configuration asks.
	ArgumentsSHA256 string         `json:"arguments_sha256,omitempty"`
	Arguments       jsontext.Value `json:"arguments,omitempty"`
	// Outcome is "ok", "tool_error" (a tool's result with isError),
	// "error" (Code is the JSON-RPC error's) or "refused" (RefusedBy
	// names the rule).
	Outcome   string `json:"outcome"`
	Code      int64  `json:"code,omitzero"`
	RefusedBy string `json:"refused_by,omitempty"`
	// HTTPStatus is the status of a call refused before it was read
	// whole (403 insufficient_scope).
	HTTPStatus int     `json:"http_status,omitzero"`
	MS         float64 `json:"ms"`
}

// Log writes records to a writer, one JSON line each, whole lines only
// however many calls end at once.
type Log struct {
	mu        sync.Mutex
	w         io.Writer
	close     func() error
	arguments atomic.Bool
	now       func() time.Time
}

// Open returns the log an audit section describes: appended to its file
// (made readable by its owner only), else written to stderr.
func Open(c *config.Audit, stderr io.Writer) (*Log, error) {
	w, closeFn, err := open(c, stderr)
	if err != nil {
		return nil, err
	}
	l := &Log{w: w, close: closeFn, now: time.Now}
	l.arguments.Store(c != nil && c.Arguments)
	return l, nil
}

// open returns the writer of an audit section: its file, opened for
// appending, else stderr.
func open(c *config.Audit, stderr io.Writer) (io.Writer, func() error, error) {
	if c == nil || c.File == "" {
		return stderr, func() error { return nil }, nil
	}
	f, err := os.OpenFile(c.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, &config.FieldError{Path: "file", Err: err}
	}
	return f, f.Close, nil
}

// Reopen checks that the log can be written as c says and returns what
// makes it so, for a reload of the configuration, which applies it only
// once every part of the configuration is checked: apply opens c's file
// again (the same name after a rotation moved the old file away, or
// another) and closes the one written so far. A file that cannot be
// opened by then leaves the log as it was, and apply says why.
func (l *Log) Reopen(c *config.Audit, stderr io.Writer) (apply func() error, err error) {
	_, closeFn, err := open(c, stderr)
	if err != nil {
		return nil, err
	}
	closeFn()
	return func() error {
		w, closeFn, err := open(c, stderr)
		if err != nil {
			return err
		}
		l.mu.Lock()
		old := l.close
		l.w, l.close = w, closeFn
		l.arguments.Store(c != nil && c.Arguments)
		l.mu.Unlock()
		return old()
	}, nil
}

// NewLog returns a log writing to w; arguments says whether records hold
// the arguments themselves.
func NewLog(w io.Writer, arguments bool) *Log {
	l := &Log{w: w, close: func() error { return nil }, now: time.Now}
	l.arguments.Store(arguments)
	return l
}

// Close closes the log's file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.close()
}

// Write writes one record.
func (l *Log) Write(r *Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(line)
	return err
}

// Refused writes the record of a call refused at the door, before the
// gateway's middleware saw it: by the resource server, with status
// (403), for want of scopes (refusedBy "insufficient_scope"). What is
// known of the call then is recorded: its caller, its server when the
// endpoint's path names one, its tool as the client named it.
func (l *Log) Refused(c *intercept.Caller, server, method, name, refusedBy string, status int) error {
	rec := &Record{Time: l.now().UTC(), Server: server, Method: method, Name: name, Outcome: "refused", RefusedBy: refusedBy, HTTPStatus: status}
	if c != nil {
		rec.Caller, rec.Issuer = callerName(c), c.Issuer
	}
	return l.Write(rec)
}

// Middleware returns gateway middleware ([gateway.Options].Middleware)
// that writes a record of every call. Put it before the access rules'
// middleware, so that the calls they refuse are recorded too. A record
// that cannot be written is reported to onError (nil: dropped), and the
// call goes on.
func (l *Log) Middleware(onError func(error)) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
			if !audited(ir.Method) {
				return next(ctx, ir)
			}
			start := l.now()
			rec := l.begin(ctx, ir, start)
			res, err := next(ctx, ir)
			rec.MS = float64(l.now().Sub(start).Microseconds()) / 1000
			outcome(rec, res, err)
			if werr := l.Write(rec); werr != nil && onError != nil {
				onError(werr)
			}
			return res, err
		}
	}
}

func audited(method string) bool {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead:
		return true
	}
	return false
}

// begin returns the record of ir as it starts.
func (l *Log) begin(ctx context.Context, ir *intercept.Request, start time.Time) *Record {
	rec := &Record{Time: start.UTC(), Method: ir.Method, Name: ir.Name()}
	if c := ir.Caller(); c != nil {
		rec.Caller, rec.Issuer = callerName(c), c.Issuer
	}
	if ep := gateway.EndpointOf(ctx); ep != nil {
		rec.View = ep.View
		if server, upName, ok := ep.Resolver(ctx, ir, ir.Method)(rec.Name); ok {
			rec.Server = server
			if upName != rec.Name {
				rec.Tool = upName
			}
		}
	}
	if args := ir.Arguments(); len(args) > 0 {
		canon := jsontext.Value(append([]byte(nil), args...))
		if err := canon.Canonicalize(); err == nil {
			sum := sha256.Sum256(canon)
			rec.ArgumentsSHA256 = hex.EncodeToString(sum[:])
			if l.arguments.Load() {
				rec.Arguments = canon
			}
		}
	}
	return rec
}

// callerName is how a record names a caller: by subject (a token file's
// caller name, a token's subject), else by ID.
func callerName(c *intercept.Caller) string {
	if c.Subject != "" {
		return c.Subject
	}
	return c.ID
}

// refused is what the access rules' refusals are (access.Refusal).
type refused interface{ RefusedBy() string }

func outcome(rec *Record, res intercept.Result, err error) {
	var ref refused
	switch {
	case errors.As(err, &ref):
		rec.Outcome, rec.RefusedBy = "refused", ref.RefusedBy()
		rec.Code = jsonrpc.AsError(err).Code
	case err != nil:
		rec.Outcome, rec.Code = "error", jsonrpc.AsError(err).Code
	case res.IsError:
		rec.Outcome = "tool_error"
	default:
		rec.Outcome = "ok"
	}
}
