package main

// A minimal RESP2 client with what gateway/shared needs of Redis: the
// URL forms (redis://, rediss://, unix://, with user, password and
// database), AUTH and SELECT, commands, pipelines, MULTI/EXEC, scripts
// (EVALSHA, then EVAL), pub/sub, a small pool and timeouts. It exists to
// measure what such a client costs to build beside go-redis and redigo.

import (
	"bufio"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNil is the reply to GET of a missing key.
var ErrNil = errors.New("redis: nil")

// Error is an error reply.
type Error string

func (e Error) Error() string { return "redis: " + string(e) }

// Options say where Redis is and how to talk to it.
type Options struct {
	Network, Addr, User, Password string
	DB                            int
	TLS                           bool
	Timeout                       time.Duration
}

// ParseURL reads redis://[user:password@]host[:port][/db],
// rediss://... (TLS) or unix://[user:password@]/path[?db=N].
func ParseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, errors.New("redis: bad URL")
	}
	o := Options{Network: "tcp", Timeout: 2 * time.Second}
	if u.User != nil {
		o.User = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	switch u.Scheme {
	case "redis", "rediss":
		o.TLS = u.Scheme == "rediss"
		o.Addr = u.Host
		if u.Port() == "" {
			o.Addr = net.JoinHostPort(u.Hostname(), "6379")
		}
		if db := strings.TrimPrefix(u.Path, "/"); db != "" {
			if o.DB, err = strconv.Atoi(db); err != nil {
				return Options{}, errors.New("redis: bad database number")
			}
		}
	case "unix":
		o.Network, o.Addr = "unix", u.Path
		if db := u.Query().Get("db"); db != "" {
			if o.DB, err = strconv.Atoi(db); err != nil {
				return Options{}, errors.New("redis: bad database number")
			}
		}
	default:
		return Options{}, errors.New("redis: want redis://, rediss:// or unix://")
	}
	return o, nil
}

// Conn is one connection.
type Conn struct {
	c       net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	timeout time.Duration
	broken  bool
}

// Dial opens a connection, authenticates and selects the database.
func Dial(o Options) (*Conn, error) {
	d := net.Dialer{Timeout: o.Timeout}
	var nc net.Conn
	var err error
	if o.TLS {
		nc, err = tls.DialWithDialer(&d, o.Network, o.Addr, &tls.Config{ServerName: strings.Split(o.Addr, ":")[0]})
	} else {
		nc, err = d.Dial(o.Network, o.Addr)
	}
	if err != nil {
		return nil, err
	}
	c := &Conn{c: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc), timeout: o.Timeout}
	if o.Password != "" {
		args := []any{"AUTH", o.Password}
		if o.User != "" {
			args = []any{"AUTH", o.User, o.Password}
		}
		if _, err := c.Do(args...); err != nil {
			nc.Close()
			return nil, err
		}
	}
	if o.DB != 0 {
		if _, err := c.Do("SELECT", o.DB); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return c, nil
}

// Send writes a command to the buffer.
func (c *Conn) Send(args ...any) {
	c.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		case int:
			s = strconv.Itoa(v)
		case int64:
			s = strconv.FormatInt(v, 10)
		default:
			s = fmt.Sprint(v)
		}
		c.w.WriteString("$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n")
	}
}

// Flush sends what Send buffered.
func (c *Conn) Flush() error {
	c.c.SetDeadline(time.Now().Add(c.timeout))
	if err := c.w.Flush(); err != nil {
		c.broken = true
		return err
	}
	return nil
}

// Receive reads one reply: string, int64, []any, nil, or an Error.
func (c *Conn) Receive() (any, error) {
	c.c.SetDeadline(time.Now().Add(c.timeout))
	v, err := c.read()
	if _, ok := err.(Error); err != nil && !ok && err != ErrNil {
		c.broken = true
	}
	return v, err
}

// ReceiveNoDeadline reads one reply with no deadline (pub/sub).
func (c *Conn) ReceiveNoDeadline() (any, error) {
	c.c.SetDeadline(time.Time{})
	return c.read()
}

// Do sends one command and reads its reply.
func (c *Conn) Do(args ...any) (any, error) {
	c.Send(args...)
	if err := c.Flush(); err != nil {
		return nil, err
	}
	return c.Receive()
}

// Pipeline sends the commands at once and reads their replies.
func (c *Conn) Pipeline(cmds ...[]any) ([]any, error) {
	for _, a := range cmds {
		c.Send(a...)
	}
	if err := c.Flush(); err != nil {
		return nil, err
	}
	out := make([]any, len(cmds))
	var first error
	for i := range cmds {
		v, err := c.Receive()
		if err != nil && first == nil {
			first = err
		}
		out[i] = v
		if c.broken {
			return out, err
		}
	}
	return out, first
}

// Multi runs the commands in MULTI/EXEC.
func (c *Conn) Multi(cmds ...[]any) ([]any, error) {
	all := append([][]any{{"MULTI"}}, cmds...)
	all = append(all, []any{"EXEC"})
	out, err := c.Pipeline(all...)
	if err != nil {
		return nil, err
	}
	res, _ := out[len(out)-1].([]any)
	return res, nil
}

func (c *Conn) read() (any, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errors.New("redis: short reply")
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, Error(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n > 512<<20 {
			return nil, errors.New("redis: bad bulk length")
		}
		if n < 0 {
			return nil, ErrNil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n > 1<<20 {
			return nil, errors.New("redis: bad array length")
		}
		if n < 0 {
			return nil, ErrNil
		}
		out := make([]any, n)
		for i := range out {
			v, err := c.read()
			if err != nil && err != ErrNil {
				if _, ok := err.(Error); !ok {
					return nil, err
				}
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("redis: unknown reply type %q", line[0])
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Pool keeps idle connections.
type Pool struct {
	opts Options
	mu   sync.Mutex
	idle []*Conn
}

// Get returns an idle connection or dials one.
func (p *Pool) Get() (*Conn, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	return Dial(p.opts)
}

// Put gives a connection back, closing a broken one.
func (p *Pool) Put(c *Conn) {
	if c.broken {
		c.Close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) < 8 {
		p.idle = append(p.idle, c)
		return
	}
	c.Close()
}

// Script runs a Lua script by its SHA1, loading it when Redis lacks it.
type Script struct{ src, sha string }

// NewScript returns the script of src.
func NewScript(src string) *Script {
	h := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(h[:])}
}

// Run runs the script with keys and args.
func (s *Script) Run(c *Conn, keys []string, args ...any) (any, error) {
	a := []any{"EVALSHA", s.sha, len(keys)}
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	v, err := c.Do(a...)
	if e, ok := err.(Error); ok && strings.HasPrefix(string(e), "NOSCRIPT") {
		a[0], a[1] = "EVAL", s.src
		return c.Do(a...)
	}
	return v, err
}
