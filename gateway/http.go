package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/internal/httpsec"
)

// ServeHTTP serves the gateway's endpoints (see the package comment).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

func (g *Gateway) routes() *http.ServeMux {
	guard := func(h http.Handler) http.Handler {
		if g.opts.Limit != nil {
			h = g.opts.Limit(h) // inside Auth: it counts the caller Auth names
		}
		if g.opts.Auth != nil {
			return g.opts.Auth(h)
		}
		return h
	}
	// Every route checks Host and Origin at the door, as the MCP
	// endpoints do (again) for themselves: a page whose name was
	// rebound to the gateway's loopback address must not read /readyz
	// or /metrics either, nor learn the servers' names from the 404s of
	// /servers/NAME/.
	sec := &httpsec.Options{AllowedOrigins: g.opts.HTTP.AllowedOrigins, AllowedHosts: g.opts.HTTP.AllowedHosts}
	mux := http.NewServeMux()
	handle := func(pattern string, h http.Handler) {
		if !g.opts.HTTP.DisableHostCheck {
			h = checkHost(sec, h)
		}
		mux.Handle(pattern, h)
	}
	handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	}))
	handle("GET /readyz", g.readyzRoute(guard))
	for pattern, h := range g.opts.Handlers {
		handle(pattern, h)
	}
	if g.opts.Metrics != nil {
		handle("GET /metrics", guard(g.opts.Metrics))
	}
	shared := func(h http.Handler) http.Handler {
		if g.share == nil {
			return h
		}
		return g.share.wrap(h, g.endpointFront)
	}
	// A session another replica owns goes there before Auth: the owner
	// authenticates the request's own credentials (forward_owner.go).
	owned := func(h http.Handler) http.Handler {
		if g.share == nil {
			return h
		}
		return g.share.toOwner(h)
	}
	handle("/mcp", owned(guard(shared(g.bindSessions(g.agg.http)))))
	handle("/sse", guard(g.bindSessions(g.agg.sse)))
	handle("/message", guard(g.bindSessions(g.agg.sse)))
	handle("/servers/{name}/{endpoint}", owned(guard(shared(g.bindSessions(http.HandlerFunc(g.serveOne))))))
	handle("/views/{name}/{endpoint}", g.viewRoute(owned(guard(shared(g.bindSessions(http.HandlerFunc(g.serveViewHTTP)))))))
	return mux
}

// checkHost refuses, before h sees it, a request whose Host or Origin the
// policy of package httpsec refuses (DNS rebinding).
func checkHost(sec *httpsec.Options, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httpsec.Check(w, r, sec) {
			h.ServeHTTP(w, r)
		}
	})
}

// readyzRoute serves /readyz to anyone who may reach the gateway, a load
// balancer's health check without credentials included: its status (200
// or 503) and whether it is ready. Which servers there are, their states
// and versions are told to those who may use them: to anyone when there
// is no Auth, else with ?verbose behind Auth.
func (g *Gateway) readyzRoute(guard func(http.Handler) http.Handler) http.Handler {
	brief := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.readyz(w, false) })
	full := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.readyz(w, true) })
	if g.opts.Auth == nil {
		return full
	}
	verbose := guard(full)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("verbose") {
			verbose.ServeHTTP(w, r)
			return
		}
		brief.ServeHTTP(w, r)
	})
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
// with each upstream's state when detailed.
func (g *Gateway) readyz(w http.ResponseWriter, detailed bool) {
	type state struct {
		State    string `json:"state"`
		Version  string `json:"protocolVersion,omitempty"`
		Restarts int    `json:"restarts,omitempty"`
	}
	out := map[string]state{}
	ready := !g.draining.Load()
	for name, st := range g.Status() {
		out[name] = state{State: st.State.String(), Version: st.Version, Restarts: st.Restarts}
		ready = ready && st.State == host.Ready
	}
	w.Header().Set("Content-Type", "application/json")
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if !detailed {
		json.NewEncoder(w).Encode(struct {
			Ready bool `json:"ready"`
		}{ready})
		return
	}
	// Maps encode in key order.
	json.NewEncoder(w).Encode(struct {
		Ready   bool             `json:"ready"`
		Servers map[string]state `json:"servers"`
	}{ready, out})
}
