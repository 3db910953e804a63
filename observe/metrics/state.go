package metrics

import "github.com/prometheus/client_golang/prometheus"

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

// Watch registers with reg metrics read from state at each scrape:
// sessions by era and revision, upstream restarts, and each upstream's
// state.
func Watch(reg prometheus.Registerer, state func() State) error {
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
