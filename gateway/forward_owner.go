package gateway

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/internal/httpdeadline"
)

// forwardedHeader marks a request one replica forwarded to the replica
// that owns its session. A request that carries it is served or answered
// where it arrives, never forwarded again: two replicas that disagree on
// who owns a session (the owner restarted at the same address under
// another name) cannot pass a request between them for ever.
const forwardedHeader = "Ferry-Forwarded"

// ownerDialTimeout bounds the connect to the replica that owns a session:
// a replica that does not answer within it is taken for gone.
const ownerDialTimeout = 5 * time.Second

// ownerKey carries, in a forwarded request's context, the URL of the
// replica it goes to.
type ownerKey struct{}

// checkAdvertise reports whether u can be ReplicaOptions.Advertise: an
// http or https URL of a host, and nothing else.
func checkAdvertise(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" && p.Scheme != "https" || p.Host == "" ||
		p.User != nil || p.Path != "" && p.Path != "/" || p.RawQuery != "" || p.Fragment != "" {
		return fmt.Errorf("gateway: the advertised URL %q is not http(s)://HOST[:PORT]", u)
	}
	return nil
}

// newOwnerProxy returns the proxy that forwards requests to the replicas
// that own their sessions: streams flow through unbuffered, a replica
// that cannot be reached gets the session answered 404.
func (sh *sharing) newOwnerProxy() *httputil.ReverseProxy {
	transport := &http.Transport{
		Proxy:               nil, // replicas reach each other directly
		DialContext:         (&net.Dialer{Timeout: ownerDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: ownerDialTimeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	sh.g.wg.Go(func() {
		<-sh.g.closing
		transport.CloseIdleConnections()
	})
	return &httputil.ReverseProxy{
		Rewrite:       rewriteToOwner,
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler:  sh.ownerUnreachable,
		BufferPool:    &copyBuffers{},
	}
}

// copyBuffers lends the proxy the buffers it copies answers through,
// which it would otherwise allocate (32 KiB) for every request.
type copyBuffers struct{ pool sync.Pool }

func (p *copyBuffers) Get() []byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, 32<<10)
}

func (p *copyBuffers) Put(b []byte) { p.pool.Put(&b) }

// rewriteToOwner sends a request on to its session's owner as the client
// sent it: its headers (its credentials included, which the owner checks
// itself), its Host (which the owner's host check accepts as this replica
// did), its body and query.
func rewriteToOwner(pr *httputil.ProxyRequest) {
	pr.SetURL(pr.In.Context().Value(ownerKey{}).(*url.URL))
	pr.Out.Host = pr.In.Host
	pr.Out.Header.Set(forwardedHeader, "1")
}

// ownerUnreachable answers a request whose owner did not answer: the
// owner is gone with the session's process, so the session is not found
// and the client initializes again.
func (sh *sharing) ownerUnreachable(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		writeNotFound(w, http.StatusServiceUnavailable, "the request ended before the gateway replica that owns its session answered")
		return
	}
	owner, _ := r.Context().Value(ownerKey{}).(*url.URL)
	sh.g.log.Warn("gateway: the replica that owns a session does not answer", "owner", owner.Host, "err", err)
	writeNotFound(w, http.StatusNotFound, "session not found: the gateway replica that ran its isolated server's process does not answer; send initialize again")
}

// toOwner forwards a request on a session whose isolated server's process
// runs on another replica to that replica, where it advertised itself;
// next serves every other request. It comes before authentication, so
// that the owner authenticates the caller from the request's own
// credentials.
func (sh *sharing) toOwner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner := sh.ownerElsewhere(r)
		if owner == nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(context.WithValue(r.Context(), ownerKey{}, owner))
		defer cancel()
		stop := context.AfterFunc(sh.stopped, cancel) // a stream ends with the gateway
		defer stop()
		sh.owners.ServeHTTP(&deadlineWriter{ResponseWriter: w, timeout: sh.writeTimeout()}, r.WithContext(ctx))
	})
}

// ownerElsewhere returns where the replica that owns r's session is
// reached, when another replica owns it and advertised where: nil for a
// request to serve here. The URL comes only from an id the sealing key
// authenticates, never from anything else a client sends.
func (sh *sharing) ownerElsewhere(r *http.Request) *url.URL {
	id := r.Header.Get(sessionHeader)
	if id == "" || r.Header.Get(forwardedHeader) != "" || sh.holds(id) {
		return nil
	}
	ss, err := sh.unseal(id)
	if err != nil || ss.Owner == "" || ss.Owner == sh.opts.Replica || ss.Advertise == "" ||
		ss.Endpoint != r.URL.Path || time.Now().Unix() >= ss.Expires {
		return nil // served, or refused with the reason, by wrap
	}
	owner, err := url.Parse(ss.Advertise)
	if err != nil {
		return nil
	}
	return owner
}

// holds reports whether this replica has a copy of session id.
func (sh *sharing) holds(id string) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.byID[id] != nil
}

// writeTimeout is the bound on each write of a forwarded answer: the
// endpoints' own (Options.HTTP.WriteTimeout; 0 is their default).
func (sh *sharing) writeTimeout() time.Duration {
	if d := sh.g.opts.HTTP.WriteTimeout; d != 0 {
		return d
	}
	return 30 * time.Second // streamablehandler's default
}

// deadlineWriter moves the connection's write deadline forward before
// each write of a forwarded answer, as the endpoints do for their own
// (package httpdeadline): a forwarded stream then lasts as long as its
// client reads it, rather than until the server's WriteTimeout, and a
// client that stops reading is cut as it would be on the owner.
type deadlineWriter struct {
	http.ResponseWriter
	timeout time.Duration
}

func (w *deadlineWriter) WriteHeader(code int) {
	httpdeadline.Write(w.ResponseWriter, w.timeout)
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	httpdeadline.Write(w.ResponseWriter, w.timeout)
	return w.ResponseWriter.Write(p)
}

// Unwrap lets the proxy flush through to the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
