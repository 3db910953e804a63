package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
)

// refuseTokens is a resource server's verifier that accepts no token.
type refuseTokens struct{}

func (refuseTokens) Verify(context.Context, string, string) (*intercept.Caller, error) {
	return nil, resourceserver.ErrInvalidToken
}

// TestLoginOfferedOnlyForOAuth (issue 36, item 7): a refused command
// offers "ferry login" only when the 401 carries an OAuth challenge with
// the resource's metadata; a static-token gateway, or a server with no
// challenge, gets told how to pass a header instead.
func TestLoginOfferedOnlyForOAuth(t *testing.T) {
	unreached := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request without credentials got through")
		w.WriteHeader(http.StatusInternalServerError)
	})
	tests := []struct {
		name    string
		handler func(url string) http.Handler
		oauth   bool
	}{
		{"static-token gateway", func(string) http.Handler { return gateway.BearerTokens([]string{"sekrit"})(unreached) }, false},
		{"no challenge", func(string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
		}, false},
		{"OAuth resource server", func(url string) http.Handler {
			rs := &resourceserver.Config{Resource: url, AuthorizationServers: []string{"https://as.invalid"}, Verifier: refuseTokens{}}
			mux := http.NewServeMux()
			rs.Mount(mux, "/", unreached)
			return mux
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h http.Handler
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
			defer srv.Close()
			h = tt.handler(srv.URL)
			t.Setenv("FERRY_STATE_DIR", t.TempDir())
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			var out, errOut bytes.Buffer
			// The user, asked, says no: no login is attempted.
			e := &env{stdin: strings.NewReader("n\n"), stdinTTY: true, stdoutTTY: true, stdout: &out, stderr: &errOut}
			code := run(context.Background(), e, []string{"tools", srv.URL})
			stderr := errOut.String()
			if code != exitAuth {
				t.Errorf("exit %d, want %d: %s", code, exitAuth, stderr)
			}
			if offered := strings.Contains(stderr, "Log in to"); offered != tt.oauth {
				t.Errorf("login offered: %v, want %v:\n%s", offered, tt.oauth, stderr)
			}
			if hinted := strings.Contains(stderr, "--header 'Authorization: Bearer"); hinted == tt.oauth {
				t.Errorf("told to pass a header: %v, want %v:\n%s", hinted, !tt.oauth, stderr)
			}
		})
	}
}
