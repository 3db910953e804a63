// Package observe instruments MCP servers and clients built on ferry, the
// gateway among them: Prometheus metrics, OpenTelemetry traces whose
// context crosses from process to process in the requests' _meta
// (traceparent and tracestate, as the MCP semantic conventions of
// OpenTelemetry have it), and structured request logs (log/slog).
//
// It is optional: ferry's core packages (jsonrpc, protocol, server,
// client, transport/...) link neither Prometheus nor OpenTelemetry; a
// program that wants them imports this package and adds its middleware:
//
//	obs, _ := observe.New(&observe.Options{Logger: slog.Default()})
//	s := server.New(impl, &server.Options{Receiving: []intercept.Middleware{obs.Middleware("my-server")}})
//	http.Handle("/metrics", obs.Handler())
//
// The server middleware records, for every request, a span named
// "{mcp.method.name} {target}" (the target being the tool, the prompt or
// the resource) whose parent is the trace context the client sent in
// _meta; the counts, durations and requests in flight by server, method,
// tool, era and outcome; and a log line. [Observer.Call] does the same on
// the client side of a request and puts the trace context into its _meta,
// so that a trace goes on into the server it calls.
package observe

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
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
	// with [TracerProviderFromEnv]). With a [noop.TracerProvider], no
	// span is started at all (the cheapest way to keep only metrics).
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
	m      *metrics
	gather prometheus.Gatherer
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	log    *slog.Logger
}

// instrumentation is the name of the tracer.
const instrumentation = "github.com/ferrymcp/ferry/observe"

// New returns an Observer whose metrics are registered with
// opts.Registerer.
func New(opts *Options) (*Observer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	obs := &Observer{log: o.Logger, prop: o.Propagator}
	reg := o.Registerer
	obs.gather = o.Gatherer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, obs.gather = r, r
	} else if obs.gather == nil {
		obs.gather = prometheus.DefaultGatherer
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	obs.m = m
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if _, off := tp.(noop.TracerProvider); !off {
		// With the no-op provider, no span is made at all: the trace
		// context that came in still goes on to the servers called.
		obs.tracer = tp.Tracer(instrumentation)
	}
	if obs.prop == nil {
		obs.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if obs.log == nil {
		obs.log = slog.New(slog.DiscardHandler)
	}
	return obs, nil
}

// Handler serves the metrics in the Prometheus exposition format.
func (o *Observer) Handler() http.Handler {
	return promhttp.HandlerFor(o.gather, promhttp.HandlerOpts{})
}
