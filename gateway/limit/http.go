package limit

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ferrymcp/ferry/intercept"
)

// viewOf reads the view of a gateway's path, /views/NAME/...: "" for
// the other endpoints.
func viewOf(p string) string {
	rest, ok := strings.CutPrefix(p, "/views/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// HTTP is the limiter's net/http middleware, for the gateway's MCP
// endpoints inside their authentication (gateway.Options.Limit): it
// counts each POST (a message, or a batch) against the rules without
// tools that match its caller and view, and answers one over a limit
// with 429 Too Many Requests and Retry-After, without reading its body.
func (l *Limiter) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := l.policy.Load()
		if p == nil || len(p.requests) == 0 || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		key, ids := callerOf(ctx, intercept.ClientKey(ctx, r.RemoteAddr))
		q := &request{caller: key, ids: ids, view: viewOf(r.URL.Path)}
		if ref := l.takeRates(ctx, p, p.requests, q); ref != nil {
			w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(ref.RetryAfter), 10))
			http.Error(w, ref.Error(), http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
