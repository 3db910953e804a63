package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/observe"
)

// get sends GET url with the given Host (when not empty) and headers, and
// returns the status and the body.
func get(t *testing.T, url, host string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// TestSideDoorsCheckHostAndOrigin: every route of a gateway on loopback
// refuses a foreign Host (a page whose name was rebound to 127.0.0.1)
// and a foreign Origin, as /mcp does, and serves loopback (issue 29,
// finding 10: at b211c63 /healthz, /readyz and /metrics answered 200 to
// Host: evil.example).
func TestSideDoorsCheckHostAndOrigin(t *testing.T) {
	obs, err := observe.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, url := start(t, []*config.Server{child(t, "a")}, &Options{Metrics: obs.Handler()})
	foreignOrigin := http.Header{"Origin": {"http://evil.example"}}
	routes := []string{"/healthz", "/readyz", "/metrics", "/mcp", "/sse", "/servers/a/mcp", "/servers/nope/mcp"}
	for _, route := range routes {
		for _, tc := range []struct {
			what   string
			host   string
			header http.Header
		}{
			{"foreign Host", "evil.example", nil},
			{"foreign Host with a port", "evil.example:80", nil},
			{"foreign Origin", "", foreignOrigin},
		} {
			if code, body := get(t, url+route, tc.host, tc.header); code != http.StatusForbidden || !strings.Contains(body, "forbidden") {
				t.Errorf("%s with a %s: %d %q, want 403", route, tc.what, code, body)
			}
		}
	}
	for _, route := range []string{"/healthz", "/readyz", "/metrics"} {
		for _, host := range []string{"", "localhost", "[::1]:8000"} {
			if code, body := get(t, url+route, host, http.Header{"Origin": {"http://localhost:6274"}}); code != http.StatusOK {
				t.Errorf("%s with Host %q: %d %q, want 200", route, host, code, body)
			}
		}
	}
}

// TestReadyzTellsServersToTheirUsers: with Auth, /readyz tells anyone
// (a load balancer's health check) whether the gateway is ready, and only
// a caller Auth lets through which servers it has (?verbose); without
// Auth, anyone who may use the servers is told.
func TestReadyzTellsServersToTheirUsers(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "secret-server")}, &Options{Auth: BearerTokens([]string{"tok"})})
	bearer := http.Header{"Authorization": {"Bearer tok"}}
	for _, tc := range []struct {
		path    string
		header  http.Header
		code    int
		servers bool
	}{
		{"/readyz", nil, http.StatusOK, false},
		{"/readyz", bearer, http.StatusOK, false},
		{"/readyz?verbose", nil, http.StatusUnauthorized, false},
		{"/readyz?verbose", http.Header{"Authorization": {"Bearer wrong"}}, http.StatusUnauthorized, false},
		{"/readyz?verbose", bearer, http.StatusOK, true},
	} {
		code, body := get(t, url+tc.path, "", tc.header)
		if code != tc.code || strings.Contains(body, "secret-server") != tc.servers ||
			code == http.StatusOK && !strings.Contains(body, `"ready":true`) {
			t.Errorf("%s %v: %d %q; want %d, servers named: %v", tc.path, tc.header, code, body, tc.code, tc.servers)
		}
	}
	_, open := start(t, []*config.Server{child(t, "b")}, nil)
	if code, body := get(t, open+"/readyz", "", nil); code != http.StatusOK || !strings.Contains(body, `"b":{"state":"ready"`) {
		t.Errorf("/readyz without Auth: %d %q", code, body)
	}
}
