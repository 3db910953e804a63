// Package metrics counts and times the requests an MCP server serves and
// a client sends, in Prometheus metrics by server, method, tool, era and
// outcome, and what a gateway reports of its sessions and upstreams
// ([Watch]). It links Prometheus, not OpenTelemetry; package observe puts
// it together with logs and traces.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus instruments. Its methods are safe for
// concurrent use.
type Metrics struct {
	requests *prometheus.CounterVec   // server side: server, method, tool, era, outcome
	duration *prometheus.HistogramVec // server side: server, method, tool
	inflight *prometheus.GaugeVec     // server side: server, method
	calls    *prometheus.CounterVec   // client side: server, method, tool, outcome
	callTime *prometheus.HistogramVec // client side: server, method, tool
	calling  *prometheus.GaugeVec     // client side: server, method

	cached series
}

// buckets span a fast in-process call to a slow tool, in seconds.
var buckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// New returns the instruments, registered with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_server_requests_total",
			Help: "Requests served, by server, method, tool (tools/call), protocol era and outcome (ok, tool_error, input_required, error).",
		}, []string{"server", "method", "tool", "era", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_server_request_duration_seconds",
			Help:    "Time to serve a request, by server, method and tool.",
			Buckets: buckets,
		}, []string{"server", "method", "tool"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcp_server_requests_in_flight",
			Help: "Requests being served, by server and method.",
		}, []string{"server", "method"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_client_requests_total",
			Help: "Requests sent to servers, by server, method, tool and outcome.",
		}, []string{"server", "method", "tool", "outcome"}),
		callTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_client_request_duration_seconds",
			Help:    "Time from sending a request to a server to its answer, by server, method and tool.",
			Buckets: buckets,
		}, []string{"server", "method", "tool"}),
		calling: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcp_client_requests_in_flight",
			Help: "Requests sent to servers and not answered yet, by server and method.",
		}, []string{"server", "method"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inflight, m.calls, m.callTime, m.calling} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// A cache holds the series of a metric vector by their labels, looked up
// once: a Vec's WithLabelValues hashes its labels and allocates their
// slice on every call, several times a request on a gateway's hot path.
// A series is made when first used, so that /metrics shows only what
// happened; the keys are bounded as the labels are (a tool name a server
// refused is counted without its name).
type cache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns the series of k, made by make the first time.
func (c *cache[K, V]) get(k K, make func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok = c.m[k]; !ok {
		if c.m == nil {
			c.m = map[K]V{}
		}
		v = make()
		c.m[k] = v
	}
	return v
}

// Label sets of the series.
type (
	methodKey  struct{ server, method string }
	toolKey    struct{ server, method, tool string }
	outcomeKey struct{ server, method, tool, era, outcome string }
)

// series are the caches of the metrics' series.
type series struct {
	inflight, calling  cache[methodKey, prometheus.Gauge]
	duration, callTime cache[toolKey, prometheus.Observer]
	requests, calls    cache[outcomeKey, prometheus.Counter]
}

func (m *Metrics) inflightOf(k methodKey) prometheus.Gauge {
	return m.cached.inflight.get(k, func() prometheus.Gauge { return m.inflight.WithLabelValues(k.server, k.method) })
}

func (m *Metrics) durationOf(k toolKey) prometheus.Observer {
	return m.cached.duration.get(k, func() prometheus.Observer {
		return m.duration.WithLabelValues(k.server, k.method, k.tool)
	})
}

func (m *Metrics) requestsOf(k outcomeKey) prometheus.Counter {
	return m.cached.requests.get(k, func() prometheus.Counter {
		return m.requests.WithLabelValues(k.server, k.method, k.tool, k.era, k.outcome)
	})
}

func (m *Metrics) callingOf(k methodKey) prometheus.Gauge {
	return m.cached.calling.get(k, func() prometheus.Gauge { return m.calling.WithLabelValues(k.server, k.method) })
}

func (m *Metrics) callTimeOf(k toolKey) prometheus.Observer {
	return m.cached.callTime.get(k, func() prometheus.Observer {
		return m.callTime.WithLabelValues(k.server, k.method, k.tool)
	})
}

func (m *Metrics) callsOf(k outcomeKey) prometheus.Counter {
	return m.cached.calls.get(k, func() prometheus.Counter {
		return m.calls.WithLabelValues(k.server, k.method, k.tool, k.outcome)
	})
}

// dropInflight removes the in-flight series of a method the server does
// not serve, made when its request came in.
func (m *Metrics) dropInflight(k methodKey) {
	c := &m.cached.inflight
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
	m.inflight.DeleteLabelValues(k.server, k.method)
}
