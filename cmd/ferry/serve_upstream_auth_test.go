package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/auth"
)

type tripFunc func(*http.Request) (*http.Response, error)

func (f tripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// keepSubjectTokens hands the token the authentication let through to
// the requests made for its caller (an Exchanger's), which never carry it
// themselves; a request without one goes with the client's own token.
func TestKeepSubjectTokens(t *testing.T) {
	const callerToken = "caller-token-5d1e"
	// The authentication, as the resource server does it: the token
	// checked, then removed from the request.
	authn := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+callerToken {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r.Header.Del("Authorization")
			next.ServeHTTP(w, r)
		})
	}
	var upstream []string // what the server behind was sent: "own" or its Authorization
	own := tripFunc(func(r *http.Request) (*http.Response, error) {
		upstream = append(upstream, "own")
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	base := tripFunc(func(r *http.Request) (*http.Response, error) {
		upstream = append(upstream, "exchange:"+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	x := &auth.Exchanger{Server: "http://127.0.0.1:9/mcp", ClientID: "gw", ClientSecret: "s"}
	hc := &http.Client{Transport: x.RoundTripper(base, own)}
	gateway := keepSubjectTokens(authn)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "POST", "http://127.0.0.1:9/mcp", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}))
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+callerToken)
	gateway.ServeHTTP(httptest.NewRecorder(), req)
	req, _ = http.NewRequest("POST", "http://127.0.0.1:9/mcp", nil)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
	// The caller's request goes the exchange's way (without a token of
	// the server's yet: the server's refusal would start the exchange),
	// never with the caller's token; the other with the client's own.
	if strings.Join(upstream, ",") != "exchange:,own" {
		t.Fatalf("the server was sent %q", upstream)
	}
}
