package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/ferrymcp/ferry/host"
)

// ServeHTTP serves the gateway's endpoints (see the package comment).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

func (g *Gateway) routes() *http.ServeMux {
	guard := func(h http.Handler) http.Handler {
		if g.opts.Auth != nil {
			return g.opts.Auth(h)
		}
		return h
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", g.readyz)
	if g.opts.Metrics != nil {
		mux.Handle("GET /metrics", guard(g.opts.Metrics))
	}
	mux.Handle("/mcp", guard(g.bindSessions(g.agg.http)))
	mux.Handle("/sse", guard(g.bindSessions(g.agg.sse)))
	mux.Handle("/message", guard(g.bindSessions(g.agg.sse)))
	mux.Handle("/servers/{name}/{endpoint}", guard(g.bindSessions(http.HandlerFunc(g.serveOne))))
	return mux
}

// serveOne serves the endpoints of one upstream.
func (g *Gateway) serveOne(w http.ResponseWriter, r *http.Request) {
	u := g.upstream(r.PathValue("name"))
	if u == nil {
		http.Error(w, "no server named "+r.PathValue("name"), http.StatusNotFound)
		return
	}
	switch r.PathValue("endpoint") {
	case "mcp":
		u.front.http.ServeHTTP(w, r)
	case "sse", "message":
		u.front.sse.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// readyz answers 200 when every upstream is connected and 503 otherwise,
// with each upstream's state.
func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	type state struct {
		State    string `json:"state"`
		Version  string `json:"protocolVersion,omitempty"`
		Restarts int    `json:"restarts,omitempty"`
	}
	out := map[string]state{}
	ready := true
	for name, st := range g.Status() {
		out[name] = state{State: st.State.String(), Version: st.Version, Restarts: st.Restarts}
		ready = ready && st.State == host.Ready
	}
	w.Header().Set("Content-Type", "application/json")
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	// Maps encode in key order.
	json.NewEncoder(w).Encode(struct {
		Ready   bool             `json:"ready"`
		Servers map[string]state `json:"servers"`
	}{ready, out})
}
