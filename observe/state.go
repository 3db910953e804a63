package observe

import (
	"context"
	"errors"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ferrymcp/ferry/observe/otlp"
)

// State is what a program with sessions and upstream servers (the
// gateway) reports of itself at each scrape.
type State struct {
	// Sessions counts the open legacy sessions by protocol revision.
	Sessions map[string]int
	// Upstreams are the servers it connects to.
	Upstreams []Upstream
}

// Upstream is the state of one server a program connects to.
type Upstream struct {
	Name string
	// State is "starting", "ready", "down", "failed", ...
	State string
	// Restarts counts the restarts after crashes or failed starts.
	Restarts int
}

// States are the states an upstream's state gauge has a series for.
var states = []string{"idle", "starting", "ready", "down", "failed", "disabled", "stopped"}

// Watch registers metrics read from state at each scrape: sessions by
// era and revision, upstream restarts, and each upstream's state.
func (o *Observer) Watch(reg prometheus.Registerer, state func() State) error {
	if reg == nil {
		r, ok := o.gather.(prometheus.Registerer)
		if !ok {
			return errors.New("observe: no registry to watch with")
		}
		reg = r
	}
	return reg.Register(newStateCollector(state))
}

// stateCollector holds its descriptions rather than package variables
// holding them: prometheus.NewDesc checks and hashes the names and labels,
// which at package initialisation every program linking observe would
// pay for at start, the ferry command for each "ferry tools" too.
type stateCollector struct {
	read                   func() State
	sessions, restarts, up *prometheus.Desc
}

func newStateCollector(read func() State) *stateCollector {
	return &stateCollector{
		read: read,
		sessions: prometheus.NewDesc("mcp_server_sessions", "Open sessions, by protocol era and revision (stateless clients have none).",
			[]string{"era", "version"}, nil),
		restarts: prometheus.NewDesc("mcp_upstream_restarts_total", "Restarts of an upstream server after a crash or a failed start.",
			[]string{"server"}, nil),
		up: prometheus.NewDesc("mcp_upstream_state", "1 for the state each upstream server is in, 0 for the others.",
			[]string{"server", "state"}, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.sessions
	ch <- c.restarts
	ch <- c.up
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	for v, n := range s.Sessions {
		ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(n), "legacy", v)
	}
	for _, u := range s.Upstreams {
		ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(u.Restarts), u.Name)
		for _, st := range states {
			v := 0.0
			if st == u.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, v, u.Name, st)
		}
	}
}

// TracerProviderFromEnv returns an OpenTelemetry tracer provider that
// exports spans over OTLP/HTTP as the standard variables say
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, ...; see
// [otlp.OptionsFromEnv]), and the function that flushes and stops it; nil
// when neither endpoint is set (or OTEL_TRACES_EXPORTER is "none").
func TracerProviderFromEnv(ctx context.Context, service string) (*sdktrace.TracerProvider, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, none, nil
	}
	opts, err := otlp.OptionsFromEnv(os.Getenv)
	if errors.Is(err, otlp.ErrNoEndpoint) {
		return nil, none, nil
	}
	if err != nil {
		return nil, nil, err
	}
	exp, err := otlp.New(opts)
	if err != nil {
		return nil, nil, err
	}
	if s := os.Getenv("OTEL_SERVICE_NAME"); s != "" {
		service = s
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
