package observe

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Prometheus instruments.
type metrics struct {
	requests *prometheus.CounterVec   // server side: server, method, tool, era, outcome
	duration *prometheus.HistogramVec // server side: server, method, tool
	inflight *prometheus.GaugeVec     // server side: server, method
	calls    *prometheus.CounterVec   // client side: server, method, tool, outcome
	callTime *prometheus.HistogramVec // client side: server, method, tool
	calling  *prometheus.GaugeVec     // client side: server, method
}

// buckets span a fast in-process call to a slow tool, in seconds.
var buckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
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

// The outcomes of a request.
const (
	outcomeOK            = "ok"
	outcomeToolError     = "tool_error"
	outcomeInputRequired = "input_required"
	outcomeError         = "error"
)
