package httpserver

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// LimitListener returns a listener that accepts at most n connections at
// once: Accept waits while n are open. It gives no address a share of
// its own; [NewListener] does.
func LimitListener(l net.Listener, n int) net.Listener {
	return NewListener(l, &Options{MaxConns: n, MaxConnsPerAddr: n})
}

// NewListener returns a listener with the connection bounds of opts:
// MaxConns at once (Accept waits while they are open), MaxConnsPerAddr
// of them from one address (a connection beyond it is closed at once),
// and, with EvictUnauthenticated, a connection not yet authenticated
// gives up its place to a new one when either bound is reached. Serve the
// listener with a server made by [New], which tells it which connections
// are being served and which were authenticated.
func NewListener(l net.Listener, opts *Options) net.Listener {
	o := opts.withDefaults()
	return &limitListener{
		Listener: l,
		max:      o.MaxConns,
		share:    o.MaxConnsPerAddr,
		evict:    o.EvictUnauthenticated,
		held:     map[string]int{},
		conns:    map[*limitConn]struct{}{},
		freed:    make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// limitListener counts its open connections, in all and by share: the
// remote address's, or the caller's once a request on the connection was
// authenticated.
type limitListener struct {
	net.Listener
	max, share int
	evict      bool
	done       chan struct{}
	closeOnce  sync.Once

	mu      sync.Mutex
	total   int
	held    map[string]int // share key -> connections
	conns   map[*limitConn]struct{}
	seq     uint64
	waiting int           // Accept calls waiting for room
	freed   chan struct{} // closed (and replaced) when room may have been made
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, err := l.admit(c)
		if err != nil {
			c.Close()
			return nil, err
		}
		if lc != nil {
			return lc, nil
		}
		// Over its address's share: refused at once, since waiting for
		// room would hold up the connections of every other address.
		c.Close()
	}
}

// admit counts c in, waiting for room while MaxConns are open; nil when
// its address holds its share already.
func (l *limitListener) admit(c net.Conn) (*limitConn, error) {
	key := addrKey(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		// A share as large as MaxConns is none: waiting for room is then
		// better than refusing.
		if l.share < l.max && l.held[key] >= l.share && !l.evictOne(key) {
			return nil, nil
		}
		if l.total < l.max || l.evictOne("") {
			break
		}
		if err := l.waitForRoom(); err != nil {
			return nil, err
		}
	}
	l.seq++
	lc := &limitConn{Conn: c, l: l, key: key, seq: l.seq}
	l.total++
	l.held[key]++
	l.conns[lc] = struct{}{}
	return lc, nil
}

// waitForRoom waits, with l.mu held on entry and on return, until a
// connection closes or becomes evictable, or the listener closes.
func (l *limitListener) waitForRoom() error {
	freed := l.freed
	l.waiting++
	l.mu.Unlock()
	var err error
	select {
	case <-freed:
	case <-l.done:
		err = net.ErrClosed
	}
	l.mu.Lock()
	l.waiting--
	return err
}

// roomMade wakes the Accept waiting for room; l.mu is held.
func (l *limitListener) roomMade() {
	if l.waiting > 0 {
		close(l.freed)
		l.freed = make(chan struct{})
	}
}

// evictOne closes the oldest connection of share key ("" for any) that
// no request was authenticated on and that is not being served (idle, or
// its request's headers still coming), when eviction is on; l.mu is held.
func (l *limitListener) evictOne(key string) bool {
	if !l.evict {
		return false
	}
	var oldest *limitConn
	for c := range l.conns {
		if c.authenticated || c.serving > 0 || key != "" && c.key != key {
			continue
		}
		if oldest == nil || c.seq < oldest.seq {
			oldest = c
		}
	}
	if oldest == nil {
		return false
	}
	l.releaseLocked(oldest)
	oldest.evicted = true
	oldest.Conn.Close()
	return true
}

// release gives c's place back.
func (l *limitListener) release(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(c)
}

func (l *limitListener) releaseLocked(c *limitConn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	l.total--
	if l.held[c.key]--; l.held[c.key] <= 0 {
		delete(l.held, c.key)
	}
	l.roomMade()
}

// enter counts a request being served on c; false when c was evicted.
func (l *limitListener) enter(c *limitConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.evicted {
		return false
	}
	c.serving++
	return true
}

// leave ends what enter began.
func (l *limitListener) leave(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.serving--; c.serving == 0 && !c.authenticated && l.evict {
		l.roomMade() // it can be evicted now
	}
}

// authenticate moves c from its address's share to caller's; false when
// caller holds its share already. A connection stays its first caller's.
func (l *limitListener) authenticate(c *limitConn, caller string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.authenticated {
		return true
	}
	key := "caller " + caller
	if l.held[key] >= l.share {
		return false
	}
	if _, open := l.conns[c]; open {
		if l.held[c.key]--; l.held[c.key] <= 0 {
			delete(l.held, c.key)
		}
		l.held[key]++
	}
	c.key = key
	c.authenticated = true
	return true
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// addrKey is the share key of a remote address: its IP, or for IPv6 its
// /64 network, which a single host is commonly given whole.
func addrKey(a net.Addr) string {
	var ip net.IP
	switch a := a.(type) {
	case *net.TCPAddr:
		ip = a.IP
	default:
		host, _, err := net.SplitHostPort(a.String())
		if err != nil {
			return "addr " + a.String()
		}
		ip = net.ParseIP(host)
		if ip == nil {
			return "addr " + host
		}
	}
	if ip.To4() == nil {
		ip = ip.Mask(net.CIDRMask(64, 128))
	}
	return "addr " + ip.String()
}

// limitConn gives its place back when it closes. Its other fields are
// guarded by its listener's mu.
type limitConn struct {
	net.Conn
	l   *limitListener
	seq uint64 // order of acceptance: the oldest is evicted first

	key           string // the share it counts against
	serving       int    // requests being served
	authenticated bool
	evicted       bool
}

// CloseWrite passes on the connection's, which net/http uses to close a
// connection gracefully.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.l.release(c)
	return err
}

// connKey carries a request's *limitConn in its context.
type connKey struct{}

// connContext is the http.Server's ConnContext: it gives the requests of
// a connection of a [NewListener] their connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // a *tls.Conn
		c = nc.NetConn()
	}
	if lc, ok := c.(*limitConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// serving wraps the server's handler: a connection is not evicted while
// one of its requests is served.
func serving(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, _ := r.Context().Value(connKey{}).(*limitConn)
		if lc == nil {
			h.ServeHTTP(w, r)
			return
		}
		if !lc.l.enter(lc) {
			return // evicted before its request got here; closed already
		}
		defer lc.l.leave(lc)
		h.ServeHTTP(w, r)
	})
}

// Authenticated tells the listener of the request whose context is ctx
// that the request was authenticated as caller (an identity of the
// authentication middleware's choosing, such as a digest of the token):
// its connection then counts against caller's share (of the size of
// MaxConnsPerAddr) instead of its address's, and is no longer evicted.
// It returns false when caller holds its share already: the middleware
// then refuses the request (429, with Connection: close). Authentication
// middleware calls it for every request it lets through; it does nothing
// (and returns true) when the connection is not one of a [NewListener]
// served by a server of [New].
func Authenticated(ctx context.Context, caller string) bool {
	lc, _ := ctx.Value(connKey{}).(*limitConn)
	if lc == nil {
		return true
	}
	return lc.l.authenticate(lc, caller)
}
