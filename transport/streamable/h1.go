package streamable

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/internal/streamwire"
)

// h1Client makes the POSTs of a Transport to a plain http:// endpoint
// reached without a proxy: HTTP/1.1 over a small pool of kept-alive
// connections, each request written with its body in one system call and
// its answer read on the caller's goroutine. net/http's client spends
// three goroutine hand-offs and some forty allocations on every request,
// which is most of the cost of a small MCP call; everything else (TLS,
// proxies, a Client of the caller's, GET streams) still goes through
// net/http.
type h1Client struct {
	addr   string // host:port to dial
	host   string // the Host header
	target string // the request target: path and query
	dialer net.Dialer
	// freshIdle is the package's freshIdle, shorter in tests.
	freshIdle time.Duration

	mu     sync.Mutex
	idle   []*h1Conn // most recently used last
	closed bool
}

// maxIdleH1 bounds the idle connections kept, as the default client's
// MaxIdleConnsPerHost does.
const maxIdleH1 = 64

// h1ReadBuffer sizes each connection's read buffer, as the net/http
// client of Transports that bring none: a head and a body of up to about
// 64 KiB come in one read system call, into memory that is already
// there, and are then copied once into the body's own buffer (a larger
// body is read straight into it). Reading the body straight into its new
// buffer from a small one costs a system call more, and the kernel then
// writes into memory the process has not touched yet, which costs more
// than the copy.
const h1ReadBuffer = 64 << 10

// newH1Client returns the client for endpoint, or nil when the endpoint
// needs what only net/http has (TLS, a proxy, credentials in the URL).
func newH1Client(endpoint string) *h1Client {
	u, err := url.Parse(endpoint)
	if !h1Supported || err != nil || u.Scheme != "http" || u.User != nil || u.Host == "" || u.Opaque != "" {
		return nil
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || p != nil {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &h1Client{addr: addr, host: u.Host, target: u.RequestURI(), dialer: net.Dialer{KeepAlive: 30 * time.Second}, freshIdle: freshIdle}
}

type h1Conn struct {
	c    net.Conn
	lim  *readLimit // between c and br: bounds what a head may take
	br   *bufio.Reader
	head []byte    // the request head being written
	idle time.Time // when it was last put back in the pool
}

// freshIdle is how long a connection back in the pool is taken again
// without checking that the server did not close it meanwhile. Servers
// close idle connections after seconds (Node's default is 5, nginx's 75),
// and the check is a system call per request.
const freshIdle = time.Second

// post sends body with the header lines fixed (already checked), those
// of hdr and, unless it is "", an MCP-Protocol-Version header, and returns
// the answer, whose Body the caller must close.
func (h *h1Client) post(ctx context.Context, fixed []byte, hdr postHeader, version string, body []byte) (*http.Response, error) {
	pc, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	// A context that ends makes the connection's reads and writes fail
	// at once; the connection is then closed, not reused.
	stop := context.AfterFunc(ctx, func() { pc.c.SetDeadline(time.Unix(1, 0)) })
	resp, err := pc.roundTrip(h, fixed, hdr, version, body, stop)
	if err != nil {
		stop()
		pc.c.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return resp, nil
}

// conn returns a live idle connection, or dials a new one.
func (h *h1Client) conn(ctx context.Context) (*h1Conn, error) {
	h.mu.Lock()
	for len(h.idle) > 0 {
		pc := h.idle[len(h.idle)-1]
		h.idle = h.idle[:len(h.idle)-1]
		h.mu.Unlock()
		// The server may have closed it while it was idle (a keep-alive
		// timeout): a request written on it would fail, and a POST cannot
		// be sent twice, so it is checked before use.
		if pc.br.Buffered() == 0 && (time.Since(pc.idle) < h.freshIdle || connAlive(pc.c)) {
			return pc, nil
		}
		pc.c.Close()
		h.mu.Lock()
	}
	h.mu.Unlock()
	c, err := h.dialer.DialContext(ctx, "tcp", h.addr)
	if err != nil {
		return nil, err
	}
	lim := &readLimit{r: c, n: -1}
	return &h1Conn{c: c, lim: lim, br: bufio.NewReaderSize(lim, h1ReadBuffer)}, nil
}

// release puts a connection whose answer was read to the end back in the
// pool.
func (h *h1Client) release(pc *h1Conn) {
	h.mu.Lock()
	if !h.closed && len(h.idle) < maxIdleH1 {
		pc.idle = time.Now()
		h.idle = append(h.idle, pc)
		pc = nil
	}
	h.mu.Unlock()
	if pc != nil {
		pc.c.Close()
	}
}

// close closes the idle connections, and those released later.
func (h *h1Client) close() {
	h.mu.Lock()
	idle := h.idle
	h.idle, h.closed = nil, true
	h.mu.Unlock()
	for _, pc := range idle {
		pc.c.Close()
	}
}

func (pc *h1Conn) roundTrip(h *h1Client, fixed []byte, hdr postHeader, version string, body []byte, stop func() bool) (*http.Response, error) {
	b := append(pc.head[:0], "POST "...)
	b = append(b, h.target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, h.host...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n"...)
	b = append(b, fixed...)
	var err error
	for _, f := range hdr {
		if b, err = appendHeaderLine(b, f.name, f.value); err != nil {
			return nil, err
		}
	}
	if version != "" {
		if b, err = appendHeaderLine(b, streamwire.HeaderProtocolVersion, version); err != nil {
			return nil, err
		}
	}
	b = append(b, "\r\n"...)
	pc.head = b
	bufs := net.Buffers{b, body}
	if _, err := bufs.WriteTo(pc.c); err != nil {
		return nil, err
	}
	return pc.readResponse(h, stop)
}

// The bounds of net/http's client on what comes before a body: the
// status lines and headers of an answer and of the informational (1xx)
// answers before it take at most maxHeadBytes together (its
// Transport.MaxResponseHeaderBytes), and at most max1xx informational
// answers come before the answer.
const (
	maxHeadBytes = 10 << 20
	max1xx       = 5
)

// errHeadTooLarge ends an answer whose head goes over maxHeadBytes.
var errHeadTooLarge = fmt.Errorf("streamable: the server's response headers exceed %d bytes", maxHeadBytes)

// readLimit is the reader under a connection's bufio.Reader: while n is
// not negative, it reads at most n more bytes, then fails.
type readLimit struct {
	r io.Reader
	n int64
}

func (l *readLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// readResponse reads the status line and the headers of the answer, and
// sets up its body.
func (pc *h1Conn) readResponse(h *h1Client, stop func() bool) (*http.Response, error) {
	pc.lim.n = maxHeadBytes
	defer func() { pc.lim.n = -1 }()
	tp := textproto.NewReader(pc.br)
	for informational := 0; ; {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, err
		}
		proto, status, ok := bytes.Cut([]byte(line), []byte(" "))
		if !ok || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(status) < 3 {
			return nil, fmt.Errorf("streamable: malformed HTTP status line %q", line)
		}
		code, err := strconv.Atoi(string(status[:3]))
		if err != nil || code < 100 || code > 999 {
			return nil, fmt.Errorf("streamable: malformed HTTP status line %q", line)
		}
		mh, err := tp.ReadMIMEHeader()
		if err != nil {
			return nil, err
		}
		if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			if informational++; informational > max1xx {
				return nil, fmt.Errorf("streamable: the server sent more than %d informational (1xx) answers", max1xx)
			}
			continue // the answer follows
		}
		resp := &http.Response{
			Status:        string(status),
			StatusCode:    code,
			Proto:         string(proto),
			ProtoMajor:    1,
			ProtoMinor:    int(proto[len(proto)-1] - '0'),
			Header:        http.Header(mh),
			ContentLength: -1,
		}
		if err := pc.setBody(h, resp, stop); err != nil {
			return nil, err
		}
		return resp, nil
	}
}

func (pc *h1Conn) setBody(h *h1Client, resp *http.Response, stop func() bool) error {
	body := &h1Body{h: h, pc: pc, stop: stop}
	resp.Body = body
	reusable := resp.ProtoMinor >= 1 && !headerHasToken(resp.Header, "Connection", "close")
	te := resp.Header.Get("Transfer-Encoding")
	switch {
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		resp.ContentLength = 0
		body.r = http.NoBody
	case te != "":
		if !equalFoldASCII(te, "chunked") {
			return fmt.Errorf("streamable: unsupported Transfer-Encoding %q", te)
		}
		body.r = httputil.NewChunkedReader(pc.br)
		body.chunked = true
	case resp.Header.Get("Content-Length") != "":
		n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("streamable: invalid Content-Length %q", resp.Header.Get("Content-Length"))
		}
		resp.ContentLength = n
		body.r = &io.LimitedReader{R: pc.br, N: n}
	default:
		body.r = pc.br // until the server closes the connection
		reusable = false
	}
	body.reusable = reusable
	if resp.ContentLength == 0 {
		body.finish(true)
	}
	return nil
}

// h1Body is the body of an answer. Read to the end, it puts the
// connection back in the pool; closed before, it closes the connection.
type h1Body struct {
	h        *h1Client
	pc       *h1Conn
	r        io.Reader
	stop     func() bool // the context's AfterFunc
	reusable bool
	chunked  bool
	done     bool
	err      error
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if lr, ok := b.r.(*io.LimitedReader); ok {
		switch {
		case lr.N == 0 && err == nil:
			err = io.EOF // say so now: the caller need not read again
		case lr.N > 0 && err == io.EOF:
			err = io.ErrUnexpectedEOF
		}
	}
	if err == io.EOF && b.chunked {
		err = b.skipTrailer()
	}
	switch {
	case err == io.EOF && b.r == io.Reader(b.pc.br):
		b.finish(false)
	case err == io.EOF:
		b.finish(true)
	case err != nil:
		b.err = err
		b.finish(false)
	}
	return n, err
}

// skipTrailer reads what follows the last chunk: trailer fields, which
// MCP has no use for, and the empty line that ends the message.
func (b *h1Body) skipTrailer() error {
	b.pc.lim.n = maxHeadBytes
	defer func() { b.pc.lim.n = -1 }()
	tp := textproto.NewReader(b.pc.br)
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return io.ErrUnexpectedEOF
		}
		if line == "" {
			return io.EOF
		}
	}
}

func (b *h1Body) Close() error {
	if !b.done {
		b.err = errors.New("streamable: read on a closed body")
		b.finish(false)
	}
	return nil
}

// finish ends the body's use of the connection: back in the pool when it
// was read cleanly to the end, closed otherwise.
func (b *h1Body) finish(clean bool) {
	if b.done {
		return
	}
	b.done = true
	if b.stop != nil && !b.stop() {
		clean = false // the context ended: the deadline is set
	}
	if clean && b.reusable {
		b.h.release(b.pc)
		return
	}
	b.pc.c.Close()
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range bytes.SplitSeq([]byte(v), []byte(",")) {
			if equalFoldASCII(string(bytes.TrimSpace(part)), token) {
				return true
			}
		}
	}
	return false
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// validHeaderName reports whether k is an HTTP token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue refuses what would break the request's framing.
func validHeaderValue(v string) bool {
	for i := range len(v) {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
