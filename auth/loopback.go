package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Loopback returns an Authorize function for AuthorizationCode that
// receives the authorization server's redirect on this machine (RFC 8252
// §7.3): it listens on the redirect URI's loopback address and port,
// calls open with the authorization URL (to open a browser, or print the
// URL for the user), and waits for the redirect that carries the state
// of the authorization URL, answering the browser with a page that says
// the window may be closed.
//
// The redirect URI must be http://127.0.0.1:PORT/PATH, http://[::1]:...,
// or http://localhost:... (then both 127.0.0.1 and ::1 are listened on,
// since a browser may resolve localhost to either).
func Loopback(open func(ctx context.Context, authURL string) error) func(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	return func(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
		u, err := url.Parse(authURL)
		if err != nil {
			return nil, fmt.Errorf("auth: the authorization URL: %w", err)
		}
		l, err := ListenLoopback(redirectURL, u.Query().Get("state"))
		if err != nil {
			return nil, err
		}
		defer l.Close()
		if err := open(ctx, authURL); err != nil {
			return nil, err
		}
		return l.Wait(ctx)
	}
}

// A LoopbackListener receives one authorization response on a loopback
// redirect URI: the first request to its path that carries its state.
type LoopbackListener struct {
	path   string
	state  string
	srv    *http.Server
	ls     []net.Listener
	once   sync.Once
	result chan url.Values
}

// ListenLoopback listens on the address of redirectURL for the
// response to the authorization request of state. Any page or program
// on this machine can send a request there: one without that state is
// answered 400 and ignored, so that it can neither end the login nor
// take the place of the real response.
func ListenLoopback(redirectURL, state string) (*LoopbackListener, error) {
	if state == "" {
		return nil, errors.New("auth: a loopback redirect needs the state of the authorization request")
	}
	u, err := url.Parse(redirectURL)
	if err != nil {
		return nil, fmt.Errorf("auth: the redirect URI: %w", err)
	}
	host, port := u.Hostname(), u.Port()
	if u.Scheme != "http" || !isLoopback(host) || port == "" {
		return nil, fmt.Errorf("auth: the redirect URI %q is not a loopback address with a port (http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH)", redirectURL)
	}
	hosts := []string{host}
	if host == "localhost" {
		hosts = []string{"127.0.0.1", "::1"}
	}
	l := &LoopbackListener{path: u.Path, state: state, result: make(chan url.Values, 1)}
	if l.path == "" {
		l.path = "/"
	}
	for i, h := range hosts {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, port))
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("auth: listening for the redirect on %s: %w", net.JoinHostPort(h, port), err)
			}
			continue // no IPv6 here
		}
		l.ls = append(l.ls, ln)
	}
	l.srv = &http.Server{Handler: http.HandlerFunc(l.serve), ReadHeaderTimeout: 10 * time.Second}
	for _, ln := range l.ls {
		go l.srv.Serve(ln)
	}
	return l, nil
}

// Wait returns the query of the redirect, when it comes.
func (l *LoopbackListener) Wait(ctx context.Context) (url.Values, error) {
	select {
	case q := <-l.result:
		return q, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("auth: waiting for the authorization server's redirect: %w", context.Cause(ctx))
	}
}

// Close stops listening.
func (l *LoopbackListener) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := l.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = l.srv.Close()
	}
	return err
}

const loopbackPage = `<!doctype html><meta charset="utf-8"><title>%s</title><body style="font-family:sans-serif;margin:3em"><h1>%s</h1><p>%s</p></body>`

func (l *LoopbackListener) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != l.path || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(l.state)) != 1 {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, loopbackPage, "Not this login", "Not this login", "This request does not answer the login in progress (its state differs). The login goes on waiting.")
		return
	}
	first := false
	l.once.Do(func() {
		first = true
		l.result <- q
	})
	switch {
	case !first:
		fmt.Fprintf(w, loopbackPage, "Already answered", "Already answered", "This login was already answered. You can close this window.")
	case q.Get("error") != "":
		// The error itself is not shown: until the client has checked
		// that the response comes from the authorization server it sent
		// the user to (RFC 9207), it must not display it.
		fmt.Fprintf(w, loopbackPage, "Not authorized", "Not authorized", "The authorization did not complete. The terminal says why. You can close this window.")
	default:
		fmt.Fprintf(w, loopbackPage, "Authorized", "Authorized", "You can close this window and go back to the terminal.")
	}
}
