package shared

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// How the store talks to Redis, with github.com/gomodule/redigo: a
// bounded pool of connections, commands bounded by the store's timeout,
// one retry on a broken connection, pipelines and transactions in one
// round trip, and a subscription that comes back after Redis does.

// endpoint is where a Redis is and how to log in to it.
type endpoint struct {
	network, address string
	user, password   string
	db               int
	tls              bool
}

// dialOptions are redigo's options for ep, after first.
func (ep endpoint) dialOptions(first ...redis.DialOption) []redis.DialOption {
	return append(first, redis.DialUsername(ep.user), redis.DialPassword(ep.password),
		redis.DialDatabase(ep.db), redis.DialUseTLS(ep.tls))
}

// dial opens a connection to ep.
func (ep endpoint) dial(ctx context.Context, opts ...redis.DialOption) (redis.Conn, error) {
	return redis.DialContext(ctx, ep.network, ep.address, ep.dialOptions(opts...)...)
}

// parseURL reads a redis://, rediss:// (TLS) or unix:// URL: the user
// and password in it, the database as the path (/2) or as ?db=2, and for
// unix:// the password as ?password= too. Its errors never hold the URL,
// which may hold a password.
func parseURL(raw string) (endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return endpoint{}, errors.New("redis: the URL does not parse")
	}
	var ep endpoint
	db := ""
	switch u.Scheme {
	case "redis", "rediss":
		ep.network, ep.address, ep.tls = "tcp", hostPort(u), u.Scheme == "rediss"
		db = strings.TrimPrefix(u.Path, "/")
	case "unix":
		if u.Path == "" {
			return endpoint{}, errors.New("redis: the unix:// URL names no socket")
		}
		ep.network, ep.address = "unix", u.Path
	default:
		return endpoint{}, errors.New("redis: the URL is not a redis://, rediss:// or unix:// URL")
	}
	if u.User != nil {
		ep.user = u.User.Username()
		ep.password, _ = u.User.Password()
	}
	if err := readQuery(u, &ep, &db); err != nil {
		return endpoint{}, err
	}
	if db != "" {
		if ep.db, err = strconv.Atoi(db); err != nil || ep.db < 0 {
			return endpoint{}, errors.New("redis: the URL's database is not a number")
		}
	}
	return ep, nil
}

// hostPort is a redis:// URL's address, localhost:6379 by default.
func hostPort(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	return net.JoinHostPort(host, port)
}

// readQuery reads the URL's options: the database (db), and for unix://
// the password. Any other is refused, naming the option only.
func readQuery(u *url.URL, ep *endpoint, db *string) error {
	for name, values := range u.Query() {
		v := values[len(values)-1]
		switch {
		case name == "db":
			*db = v
		case name == "password" && u.Scheme == "unix":
			ep.password = v
		default:
			return fmt.Errorf("redis: the URL's option %q is not one ferry knows (db, and password for unix://)", name)
		}
	}
	return nil
}

// poolSize bounds the connections of a store (go-redis's default was
// the same): a caller past it waits for one, within the store's timeout.
var poolSize = 10 * runtime.GOMAXPROCS(0)

// newPool makes the store's pool of connections to ep, each command
// bounded by timeout. An idle connection is checked with a PING before
// use when a connection was found broken since it was put back (Redis
// restarted, say), so that the one retry of a command meets a live one.
func newPool(ep endpoint, timeout time.Duration, broken *atomic.Int64) *redis.Pool {
	return &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return ep.dial(ctx, redis.DialConnectTimeout(timeout), redis.DialReadTimeout(timeout), redis.DialWriteTimeout(timeout))
		},
		MaxIdle:     poolSize,
		MaxActive:   poolSize,
		Wait:        true,
		IdleTimeout: 5 * time.Minute,
		TestOnBorrowContext: func(ctx context.Context, c redis.Conn, idleSince time.Time) error {
			if idleSince.UnixNano() > broken.Load() {
				return nil
			}
			_, err := redis.DoContext(c, ctx, "PING")
			return err
		},
	}
}

// with runs fn on a connection of the pool. When the connection broke
// under it (Redis restarted or went away), fn runs once more on another,
// as go-redis's one retry did: a command may then run twice, which every
// command of this package bears.
func (s *Store) with(ctx context.Context, fn func(redis.Conn) error) error {
	for attempt := 0; ; attempt++ {
		c, err := s.conn(ctx)
		if err != nil {
			return err
		}
		err = fn(c)
		broke := c.Err() != nil
		c.Close()
		if err == nil || !broke || attempt > 0 || ctx.Err() != nil {
			return err
		}
		s.broken.Store(time.Now().UnixNano())
	}
}

// conn takes a connection of the pool, waiting for one at most the
// store's timeout: callers never queue without bound.
func (s *Store) conn(ctx context.Context) (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c, err := s.pool.GetContext(ctx)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return nil, fmt.Errorf("no connection to Redis within %v", s.timeout)
	}
	return c, err
}

// do runs one command.
func (s *Store) do(ctx context.Context, name string, args ...any) (reply any, err error) {
	err = s.with(ctx, func(c redis.Conn) error {
		reply, err = redis.DoContext(c, ctx, name, args...)
		return err
	})
	return reply, err
}

// command is one command of a pipeline or a transaction.
type command struct {
	name string
	args []any
}

func cmd(name string, args ...any) command { return command{name, args} }

// pipelineReplies runs cmds in one round trip and returns their
// replies in order, an error reply among them as a [redis.Error].
func (s *Store) pipelineReplies(ctx context.Context, cmds ...command) (replies []any, err error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	err = s.with(ctx, func(c redis.Conn) error {
		for _, cm := range cmds {
			if err := c.Send(cm.name, cm.args...); err != nil {
				return err
			}
		}
		replies, err = redis.Values(redis.DoContext(c, ctx, ""))
		return err
	})
	return replies, err
}

// pipeline is pipelineReplies with the first error reply returned as
// the error.
func (s *Store) pipeline(ctx context.Context, cmds ...command) ([]any, error) {
	replies, err := s.pipelineReplies(ctx, cmds...)
	if err != nil {
		return nil, err
	}
	for _, r := range replies {
		if e, ok := r.(redis.Error); ok {
			return nil, e
		}
	}
	return replies, nil
}

// transaction runs cmds in MULTI and EXEC, in one round trip.
func (s *Store) transaction(ctx context.Context, cmds ...command) error {
	return s.with(ctx, func(c redis.Conn) error {
		if err := c.Send("MULTI"); err != nil {
			return err
		}
		for _, cm := range cmds {
			if err := c.Send(cm.name, cm.args...); err != nil {
				return err
			}
		}
		_, err := redis.DoContext(c, ctx, "EXEC")
		return err
	})
}

// script runs sc by EVALSHA, or by EVAL when Redis does not hold it yet.
func (s *Store) script(ctx context.Context, ls *luaScript, keysAndArgs ...any) (reply any, err error) {
	sc := ls.script()
	err = s.with(ctx, func(c redis.Conn) error {
		reply, err = sc.DoContext(ctx, c, keysAndArgs...)
		return err
	})
	return reply, err
}

// luaScript is a Lua script and its key count (-1: given with each call).
// Its redis.Script, which hashes the source, is made at its first use, not
// at start-up: every ferry command pays its package's init, and most never
// open a Redis.
type luaScript struct {
	keys int
	src  string
	once sync.Once
	sc   *redis.Script
}

func (l *luaScript) script() *redis.Script {
	l.once.Do(func() { l.sc = redis.NewScript(l.keys, l.src) })
	return l.sc
}

// keysArgs are the arguments of a script made with a key count of -1:
// the count, the keys, the other arguments.
func keysArgs(keys []string, args ...any) []any {
	all := make([]any, 0, 1+len(keys)+len(args))
	all = append(all, len(keys))
	for _, k := range keys {
		all = append(all, k)
	}
	return append(all, args...)
}

// subscribePing is how often a subscription asks Redis whether it is
// still there: a connection silent past it and the timeout is dropped
// and made again.
const subscribePing = 10 * time.Second

// subscribe calls fn with every message on channel until ctx is done or
// the store is closed. It subscribes again after the connection breaks
// (Redis restarted, or silent for longer than a ping and the timeout),
// waiting a little longer between attempts while Redis stays away.
// Messages published while no subscription stands are not seen.
func (s *Store) subscribe(ctx context.Context, channel string, fn func([]byte)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.closed, cancel)()
	wait := backoff{min: 100 * time.Millisecond, max: 2 * time.Second}
	for ctx.Err() == nil {
		heard, err := s.subscribeOnce(ctx, channel, fn)
		if ctx.Err() != nil {
			return
		}
		if heard {
			wait.reset()
			s.log.Warn("shared: the subscription to Redis broke; subscribing again", "err", err)
		} else {
			s.log.Debug("shared: could not subscribe to Redis; trying again", "err", err)
		}
		if !wait.sleep(ctx) {
			return
		}
	}
}

// subscribeOnce holds one subscription until its connection breaks or
// ctx is done; heard tells whether Redis confirmed it.
func (s *Store) subscribeOnce(ctx context.Context, channel string, fn func([]byte)) (heard bool, err error) {
	c, err := s.dialSubscriber(ctx)
	if err != nil {
		return false, err
	}
	psc := redis.PubSubConn{Conn: c}
	defer psc.Close()
	stop := context.AfterFunc(ctx, func() { psc.Close() })
	defer stop()
	if err := psc.Subscribe(channel); err != nil {
		return false, err
	}
	pinged := make(chan struct{})
	done := make(chan struct{})
	defer func() { close(done); <-pinged }()
	go s.pingSubscriber(psc, done, pinged)
	for {
		switch m := psc.ReceiveWithTimeout(subscribePing + s.timeout).(type) {
		case redis.Message:
			fn(m.Data)
		case redis.Subscription:
			heard = true
		case error:
			return heard, m
		}
	}
}

// dialSubscriber opens a connection of its own for a subscription: its
// reads wait as long as ReceiveWithTimeout says, not the store's timeout.
func (s *Store) dialSubscriber(ctx context.Context) (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.ep.dial(ctx, redis.DialConnectTimeout(s.timeout), redis.DialWriteTimeout(s.timeout))
}

// pingSubscriber sends psc a PING every subscribePing until done, so
// that a live subscription always hears something before its read times
// out; it closes pinged when it returns.
func (s *Store) pingSubscriber(psc redis.PubSubConn, done <-chan struct{}, pinged chan<- struct{}) {
	defer close(pinged)
	t := time.NewTicker(subscribePing)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if psc.Ping("") != nil {
				return
			}
		}
	}
}

// backoff is a wait that doubles from min to max until reset.
type backoff struct{ min, max, next time.Duration }

func (b *backoff) reset() { b.next = 0 }

// sleep waits the next wait, false when ctx is done first.
func (b *backoff) sleep(ctx context.Context) bool {
	b.next = min(max(2*b.next, b.min), b.max)
	t := time.NewTimer(b.next)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
