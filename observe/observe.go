// Package observe instruments MCP servers and clients built on ferry, the
// gateway among them, with all three of: Prometheus metrics (package
// observe/metrics), OpenTelemetry traces whose context crosses from
// process to process in the requests' _meta (package observe/tracing),
// and structured request logs (package observe/logs). A program that
// wants only one of them imports that package and links only its
// library: request logs alone link neither Prometheus nor OpenTelemetry.
//
// It is optional: ferry's core packages (jsonrpc, protocol, server,
// client, transport/...) link neither Prometheus nor OpenTelemetry; a
// program that wants them imports this package and adds its middleware:
//
//	obs, _ := observe.New(&observe.Options{Logger: slog.Default()})
//	s := server.New(impl, &server.Options{Receiving: []intercept.Middleware{obs.Middleware("my-server")}})
//	http.Handle("/metrics", obs.Handler())
//
// The server middleware records, for every request, a span whose parent
// is the trace context the client sent in _meta; the counts, durations
// and requests in flight by server, method, tool, era and outcome; and a
// log line with the span's trace id. [Observer.SendingMiddleware] does
// the same on the client side of a request and puts the trace context
// into its _meta, so that a trace goes on into the server it calls.
package observe

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/observe/logs"
	"github.com/ferrymcp/ferry/observe/metrics"
	"github.com/ferrymcp/ferry/observe/tracing"
)

// Options configure an [Observer]. The zero value is usable.
type Options struct {
	// Registerer is where the metrics are registered; nil means a
	// registry of the Observer's own, which [Observer.Handler] serves.
	Registerer prometheus.Registerer
	// Gatherer is what Handler serves when Registerer is set (default
	// prometheus.DefaultGatherer).
	Gatherer prometheus.Gatherer
	// TracerProvider makes the spans; nil means OpenTelemetry's global
	// provider (a no-op one unless the program set another, for example
	// with [TracerProviderFromEnv]). With a noop.TracerProvider, no span
	// is started at all (the cheapest way to keep only metrics).
	TracerProvider trace.TracerProvider
	// Propagator reads and writes the trace context of _meta; nil means
	// W3C Trace Context (traceparent, tracestate) and Baggage.
	Propagator propagation.TextMapPropagator
	// Logger receives a line per request at Debug level, and failures at
	// Warn. Nil logs nothing.
	Logger *slog.Logger
}

// Observer holds the instruments. Its methods are safe for concurrent
// use.
type Observer struct {
	metrics *metrics.Metrics
	tracing *tracing.Tracing
	logs    *logs.Log // nil: no logger
	gather  prometheus.Gatherer
}

// New returns an Observer whose metrics are registered with
// opts.Registerer.
func New(opts *Options) (*Observer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	obs := &Observer{gather: o.Gatherer}
	reg := o.Registerer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, obs.gather = r, r
	} else if obs.gather == nil {
		obs.gather = prometheus.DefaultGatherer
	}
	m, err := metrics.New(reg)
	if err != nil {
		return nil, err
	}
	obs.metrics = m
	obs.tracing = tracing.New(&tracing.Options{TracerProvider: o.TracerProvider, Propagator: o.Propagator})
	if o.Logger != nil {
		obs.logs = logs.New(&logs.Options{Logger: o.Logger, Attrs: tracing.LogAttrs})
	}
	return obs, nil
}

// Middleware returns receiving middleware that observes every request of
// a server, named name in the metrics and logs: the span outermost, so
// that the time counted and the log line are the span's.
func (o *Observer) Middleware(name string) intercept.Middleware {
	return chain(o.tracing.Middleware(), o.metrics.Middleware(name), o.logMiddleware(name, (*logs.Log).Middleware))
}

// SendingMiddleware returns a client's sending middleware that observes
// every request the client sends to the server named server: it starts a
// client span, puts the trace context into the request's _meta
// (intercept.Request.Meta) so that the server's spans join the trace,
// counts the request and its time, and logs it. A gateway installs it on
// its clients to its servers (through their client.Options).
func (o *Observer) SendingMiddleware(server string) intercept.Middleware {
	return chain(o.tracing.SendingMiddleware(server), o.metrics.SendingMiddleware(server), o.logMiddleware(server, (*logs.Log).SendingMiddleware))
}

// logMiddleware is the logs' middleware, nil without a logger.
func (o *Observer) logMiddleware(name string, of func(*logs.Log, string) intercept.Middleware) intercept.Middleware {
	if o.logs == nil {
		return nil
	}
	return of(o.logs, name)
}

// chain makes one middleware of mw, the first outermost; nil ones are
// left out.
func chain(mw ...intercept.Middleware) intercept.Middleware {
	mw = slices.DeleteFunc(mw, func(m intercept.Middleware) bool { return m == nil })
	return func(next intercept.Handler) intercept.Handler { return intercept.Chain(next, mw...) }
}

// Handler serves the metrics in the Prometheus exposition format.
func (o *Observer) Handler() http.Handler {
	return promhttp.HandlerFor(o.gather, promhttp.HandlerOpts{})
}

// State is what a program with sessions and upstream servers (the
// gateway) reports of itself at each scrape.
type State = metrics.State

// Upstream is the state of one server a program connects to.
type Upstream = metrics.Upstream

// Watch registers metrics read from state at each scrape: sessions by
// era and revision, upstream restarts, and each upstream's state. A nil
// reg means the Observer's own registry.
func (o *Observer) Watch(reg prometheus.Registerer, state func() State) error {
	if reg == nil {
		r, ok := o.gather.(prometheus.Registerer)
		if !ok {
			return errors.New("observe: no registry to watch with")
		}
		reg = r
	}
	return metrics.Watch(reg, state)
}

// TracerProviderFromEnv is [tracing.TracerProviderFromEnv].
func TracerProviderFromEnv(ctx context.Context, service string) (*sdktrace.TracerProvider, func(context.Context) error, error) {
	return tracing.TracerProviderFromEnv(ctx, service)
}
