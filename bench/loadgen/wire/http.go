package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// HTTP is a Streamable HTTP server spoken to by a minimal HTTP/1.1
// client: each worker has its own keep-alive connection and writes and
// reads on its own goroutine, so the client costs little next to any
// server. In the legacy era all workers share the one session the
// handshake opened (16 in flight means 16 concurrent POSTs in a session).
type HTTP struct {
	era      Era
	addr     string
	path     string
	timeout  time.Duration
	protocol string
	session  string
	opts     HTTPOptions
	callHdr  []byte
	workers  []httpWorker
	sse      atomic.Bool
}

type httpWorker struct {
	conn   net.Conn
	br     *bufio.Reader
	head   []byte
	req    []byte
	resp   []byte
	events []byte
	seq    int64
	calls  int
}

type httpAnswer struct {
	status  int
	sse     bool
	session string
	body    []byte
}

// HTTPOptions are what a gateway in front of the echo server may need:
// the name it shows the tool under and the caller's credentials.
type HTTPOptions struct {
	// Tool is the name the calls ask for; empty means [EchoTool].
	Tool string
	// Bearer, if not empty, is sent as "Authorization: Bearer" on every
	// request.
	Bearer string
}

// check refuses what would break the requests' framing.
func (o HTTPOptions) check() error {
	if strings.ContainsAny(o.Bearer, "\r\n") {
		return errors.New("the bearer token holds a line break")
	}
	return CheckToolName(o.tool())
}

func (o HTTPOptions) tool() string {
	if o.Tool == "" {
		return EchoTool
	}
	return o.Tool
}

// DialHTTP performs the era's handshake with the server at rawURL
// (http://127.0.0.1:PORT/PATH) and returns the connection for workers
// concurrent callers of echo.
func DialHTTP(rawURL string, era Era, workers int, timeout time.Duration) (*HTTP, error) {
	return DialHTTPWith(rawURL, era, workers, timeout, HTTPOptions{})
}

// DialHTTPWith is DialHTTP with the tool's name and credentials of opts.
func DialHTTPWith(rawURL string, era Era, workers int, timeout time.Duration, opts HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("%q: want http://HOST:PORT/PATH", rawURL)
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	h := &HTTP{era: era, addr: u.Host, path: u.RequestURI(), timeout: timeout, opts: opts, workers: make([]httpWorker, workers)}
	if err := h.handshake(); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// headers is the header block of every request, with the method headers
// the modern era requires.
func (h *HTTP) headers(method, name string) []byte {
	b := fmt.Appendf(nil, "Host: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: %s\r\n",
		h.addr, h.era.Version())
	if h.opts.Bearer != "" {
		b = fmt.Appendf(b, "Authorization: Bearer %s\r\n", h.opts.Bearer)
	}
	if h.session != "" {
		b = fmt.Appendf(b, "Mcp-Session-Id: %s\r\n", h.session)
	}
	if h.era == Modern {
		b = fmt.Appendf(b, "Mcp-Method: %s\r\n", method)
		if name != "" {
			b = fmt.Appendf(b, "Mcp-Name: %s\r\n", name)
		}
	}
	return b
}

func (h *HTTP) handshake() error {
	w := &h.workers[0]
	method := "initialize"
	if h.era == Modern {
		method = "server/discover"
	}
	a, err := h.post(w, h.headers(method, ""), h.era.handshake(0), 0)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if a.status != 200 {
		return fmt.Errorf("handshake: HTTP %d: %.200s", a.status, a.body)
	}
	if h.protocol, err = h.era.checkHandshake(a.body); err != nil {
		return err
	}
	h.session = a.session
	if h.era == Legacy {
		a, err := h.post(w, h.headers("notifications/initialized", ""), []byte(initialized), -1)
		if err != nil {
			return fmt.Errorf("notifications/initialized: %w", err)
		}
		if a.status != 202 && a.status != 200 {
			return fmt.Errorf("notifications/initialized: HTTP %d: %.200s", a.status, a.body)
		}
	}
	h.callHdr = h.headers("tools/call", h.opts.tool())
	return nil
}

// Protocol is the negotiated protocol version.
func (h *HTTP) Protocol() string { return h.protocol }

// Body is the kind of body the server answered calls with.
func (h *HTTP) Body() string {
	if h.sse.Load() {
		return "sse"
	}
	return "json"
}

// Call sends one tools/call of the tool with msg and checks its answer.
func (h *HTTP) Call(worker int, msg []byte) error {
	w := &h.workers[worker]
	w.seq++
	w.calls++
	id := w.seq*MaxWorkers + int64(worker)
	w.req = h.era.AppendCall(w.req[:0], id, h.opts.tool(), msg)
	a, err := h.post(w, h.callHdr, w.req, id)
	if err != nil {
		return err
	}
	if a.status != 200 {
		return fmt.Errorf("HTTP %d: %.200s", a.status, a.body)
	}
	if a.sse {
		h.sse.Store(true)
	}
	if err := CheckAnswer(a.body, msg); err != nil {
		return err
	}
	if got, _ := MessageID(a.body); got != id {
		return fmt.Errorf("answer to id %d came for id %d", got, id)
	}
	if w.calls%64 == 0 {
		return FullCheck(a.body, id, msg)
	}
	return nil
}

// post sends one request and reads its answer; a connection the server
// closed while idle is opened again once. id < 0 is a notification (no
// answer message expected); otherwise an SSE body is searched for the
// message answering id.
func (h *HTTP) post(w *httpWorker, hdr, body []byte, id int64) (httpAnswer, error) {
	for attempt := 0; ; attempt++ {
		reused := w.conn != nil
		if !reused {
			c, err := net.DialTimeout("tcp", h.addr, h.timeout)
			if err != nil {
				return httpAnswer{}, fmt.Errorf("%w: %v", ErrFatal, err)
			}
			w.conn, w.br = c, bufio.NewReaderSize(c, 1<<16)
		}
		a, started, err := h.roundTrip(w, hdr, body, id)
		if err == nil {
			return a, nil
		}
		w.conn.Close()
		w.conn = nil
		if !reused || started || attempt > 0 {
			return a, err
		}
	}
}

func (h *HTTP) roundTrip(w *httpWorker, hdr, body []byte, id int64) (a httpAnswer, started bool, err error) {
	w.conn.SetDeadline(time.Now().Add(h.timeout))
	w.head = append(append(append(w.head[:0], "POST "...), h.path...), " HTTP/1.1\r\n"...)
	w.head = append(w.head, hdr...)
	w.head = strconv.AppendInt(append(w.head, "Content-Length: "...), int64(len(body)), 10)
	w.head = append(w.head, "\r\n\r\n"...)
	bufs := net.Buffers{w.head, body}
	if _, err := bufs.WriteTo(w.conn); err != nil {
		return a, false, err
	}
	if _, err := w.br.Peek(1); err != nil {
		return a, false, err
	}
	resp, closeAfter, err := readResponse(w.br, &w.resp)
	if err != nil {
		return a, true, err
	}
	a = resp
	if closeAfter {
		w.conn.Close()
		w.conn = nil
	}
	if a.sse && id >= 0 {
		a.body, err = sseMessage(a.body, id, &w.events)
	}
	return a, true, err
}

// readResponse reads a status line, headers and a body (Content-Length,
// chunked, or none for 202/204) into *buf.
func readResponse(br *bufio.Reader, buf *[]byte) (a httpAnswer, closeAfter bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return a, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return a, false, fmt.Errorf("bad status line %.60q", line)
	}
	if a.status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return a, false, fmt.Errorf("bad status line %.60q", line)
	}
	length, chunked := -1, false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return a, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case asciiEqualFold(k, "content-length"):
			if length, err = strconv.Atoi(string(v)); err != nil {
				return a, false, fmt.Errorf("bad Content-Length %q", v)
			}
		case asciiEqualFold(k, "transfer-encoding"):
			chunked = bytes.Contains(bytes.ToLower(v), []byte("chunked"))
		case asciiEqualFold(k, "content-type"):
			a.sse = bytes.HasPrefix(bytes.ToLower(v), []byte("text/event-stream"))
		case asciiEqualFold(k, "connection"):
			closeAfter = asciiEqualFold(v, "close")
		case asciiEqualFold(k, "mcp-session-id"):
			a.session = string(v)
		}
	}
	*buf = (*buf)[:0]
	switch {
	case chunked:
		err = readChunked(br, buf)
	case length >= 0:
		*buf = growTo(*buf, length)
		_, err = io.ReadFull(br, *buf)
	case a.status == 202 || a.status == 204 || a.status == 304:
	default: // the body runs to the end of the connection
		closeAfter = true
		var b bytes.Buffer
		_, err = b.ReadFrom(br)
		*buf = append(*buf, b.Bytes()...)
	}
	a.body = *buf
	return a, closeAfter, err
}

// growTo returns b resized to n bytes, keeping what it holds.
func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		nb := make([]byte, n, max(n, 2*cap(b)))
		copy(nb, b)
		return nb
	}
	return b[:n]
}

func readChunked(br *bufio.Reader, buf *[]byte) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		sizeHex, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		size, err := strconv.ParseInt(string(bytes.TrimSpace(sizeHex)), 16, 64)
		if err != nil || size < 0 || size > 1<<30 {
			return fmt.Errorf("bad chunk size %.40q", line)
		}
		if size == 0 {
			for { // trailers, then the empty line
				line, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		n := len(*buf)
		*buf = growTo(*buf, n+int(size))
		if _, err := io.ReadFull(br, (*buf)[n:]); err != nil {
			return err
		}
		if _, err := br.Discard(2); err != nil {
			return err
		}
	}
}

// sseMessage returns the data of the event in an SSE body that answers id.
func sseMessage(body []byte, id int64, scratch *[]byte) ([]byte, error) {
	data := (*scratch)[:0]
	lines := 0
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte("\n"))
		body = rest
		line = bytes.TrimSuffix(line, []byte("\r"))
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if lines > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			lines++
			continue
		}
		if len(line) == 0 && lines > 0 {
			if got, ok := MessageID(data); ok && got == id {
				*scratch = data
				return data, nil
			}
			data, lines = data[:0], 0
		}
	}
	if got, ok := MessageID(data); ok && got == id && lines > 0 {
		*scratch = data
		return data, nil
	}
	*scratch = data
	return nil, errors.New("the SSE stream ended without the answer")
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Close closes every worker's connection and, in the legacy era, ends
// the session (DELETE), as a well-behaved client does.
func (h *HTTP) Close() error {
	for i := range h.workers {
		if w := &h.workers[i]; w.conn != nil {
			w.conn.Close()
			w.conn = nil
		}
	}
	if h.session == "" {
		return nil
	}
	c, err := net.DialTimeout("tcp", h.addr, time.Second)
	if err != nil {
		return nil
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	auth := ""
	if h.opts.Bearer != "" {
		auth = "Authorization: Bearer " + h.opts.Bearer + "\r\n"
	}
	fmt.Fprintf(c, "DELETE %s HTTP/1.1\r\nHost: %s\r\n%sMCP-Protocol-Version: %s\r\nMcp-Session-Id: %s\r\nConnection: close\r\n\r\n",
		h.path, h.addr, auth, h.era.Version(), h.session)
	var buf []byte
	readResponse(bufio.NewReader(c), &buf)
	return nil
}
