// Package logs writes a structured line (log/slog) for every request an
// MCP server serves or a client sends: server, method, target, outcome,
// time taken, era and session. It links neither Prometheus nor
// OpenTelemetry: a program that wants only request logs imports this
// package, not package observe, which puts logs, metrics and traces
// together.
//
//	l := logs.New(&logs.Options{Logger: slog.Default()})
//	s := server.New(impl, &server.Options{Receiving: []intercept.Middleware{l.Middleware("my-server")}})
package logs

import (
	"context"
	"log/slog"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe/internal/request"
	"github.com/ferrymcp/ferry/server"
)

// Options configure a [Log].
type Options struct {
	// Logger receives a line per request at Debug level, and failures at
	// Warn. Nil logs nothing.
	Logger *slog.Logger
	// Attrs, when set, returns attributes of the request's context to add
	// to its line: package observe/tracing's LogAttrs adds the trace and
	// span ids.
	Attrs func(context.Context) []slog.Attr
}

// Log writes the request lines. Its methods are safe for concurrent use.
type Log struct {
	log   *slog.Logger
	attrs func(context.Context) []slog.Attr
}

// New returns a Log writing to opts.Logger.
func New(opts *Options) *Log {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Log{log: o.Logger, attrs: o.Attrs}
}

// Middleware returns receiving middleware that logs every request of a
// server, named name in the lines ("request").
func (l *Log) Middleware(name string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if !l.log.Enabled(ctx, slog.LevelWarn) {
				return next(ctx, req)
			}
			start := time.Now()
			res, err := next(ctx, req)
			l.write(ctx, "request", name, req, res, err, time.Since(start),
				slog.String("era", request.Era(req)), slog.String("session", request.SessionID(server.RequestOf(req))))
			return res, err
		}
	}
}

// SendingMiddleware returns a client's sending middleware that logs every
// request the client sends to the server named server ("call").
func (l *Log) SendingMiddleware(server string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if !l.log.Enabled(ctx, slog.LevelWarn) {
				return next(ctx, req)
			}
			start := time.Now()
			res, err := next(ctx, req)
			l.write(ctx, "call", server, req, res, err, time.Since(start))
			return res, err
		}
	}
}

// write writes a request's line: at Debug when it went well, at Warn when
// it failed.
func (l *Log) write(ctx context.Context, msg, server string, req *intercept.Request, res intercept.Result, err error, took time.Duration, extra ...slog.Attr) {
	level := slog.LevelDebug
	if err != nil {
		level = slog.LevelWarn
	}
	if !l.log.Enabled(ctx, level) {
		return
	}
	attrs := append([]slog.Attr{
		slog.String("server", server), slog.String("method", req.Method),
		slog.String("outcome", request.Outcome(res, err)), slog.Duration("took", took),
	}, extra...)
	if name, _ := request.Target(req); name != "" {
		attrs = append(attrs, slog.String("target", name))
	}
	if l.attrs != nil {
		attrs = append(attrs, l.attrs(ctx)...)
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.log.LogAttrs(ctx, level, msg, attrs...)
}
