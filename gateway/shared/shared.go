// Package shared keeps in Redis what the replicas of one gateway share:
// the keys that seal their session ids (see [gateway.Sealer]) and what
// changes during their legacy sessions (a [gateway.SessionStore]).
//
// Nothing of it is on the way of a tools/call of a session a replica
// already serves: the store is read when a replica opens its copy of a
// session, and written when a client changes its session (its log level,
// its subscriptions, its end), which the other replicas learn by pub/sub.
// Every key of a session expires with the session's id; the sealing keys
// are the deployment's and do not expire.
package shared

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/gateway"
)

// Store is a Redis shared by the replicas of a gateway.
type Store struct {
	pool    *redis.Pool
	ep      endpoint
	timeout time.Duration
	// broken is when a connection was last found broken (Unix ns): the
	// pool checks those idle since before it.
	broken atomic.Int64
	// closed is done once Close is called: subscriptions end with it.
	closed context.Context
	close  context.CancelFunc
	prefix string
	log    *slog.Logger
}

// Options configure a [Store]. The zero value is usable.
type Options struct {
	// Prefix begins every key (default "ferry:"), so that gateways that
	// must not trust each other's sessions can share one Redis.
	Prefix string
	// Timeout bounds each command (default 2 seconds): Redis down fails
	// a change at once, not after a hang.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Open connects to the Redis at url (redis:// or rediss://, with the
// user, password and database in it) and checks that it answers. Errors
// never hold the URL, which may hold a password.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = "ferry:"
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ep, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	s := &Store{ep: ep, timeout: o.Timeout, prefix: o.Prefix, log: o.Logger}
	s.pool = newPool(ep, o.Timeout, &s.broken)
	s.closed, s.close = context.WithCancel(context.Background())
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if _, err := s.do(ctx, "PING"); err != nil {
		s.Close()
		return nil, fmt.Errorf("redis at %s: %w", ep.address, err)
	}
	return s, nil
}

// Close closes the connections, and ends the store's Watch.
func (s *Store) Close() error {
	s.close()
	return s.pool.Close()
}

// keysKey holds the sealing keys, hex, one a line, the current one first.
func (s *Store) keysKey() string { return s.prefix + "session-keys" }

// Keys returns the sealing keys the replicas share, the current one
// first, making one when there is none yet (the first replica to start
// does; the others read it).
func (s *Store) Keys(ctx context.Context) ([][]byte, error) {
	return s.keysOr(ctx, [][]byte{gateway.NewKey()})
}

// keysOr returns the shared keys, putting have there first when Redis
// holds none.
func (s *Store) keysOr(ctx context.Context, have [][]byte) ([][]byte, error) {
	lines := make([]string, len(have))
	for i, k := range have {
		lines[i] = hex.EncodeToString(k)
	}
	replies, err := s.pipeline(ctx, cmd("SET", s.keysKey(), strings.Join(lines, "\n"), "NX"), cmd("GET", s.keysKey()))
	if err != nil {
		return nil, fmt.Errorf("redis: session keys: %w", err)
	}
	text, err := redis.String(replies[1], nil)
	if err != nil {
		return nil, fmt.Errorf("redis: session keys: %w", err)
	}
	return gateway.ReadKeys(strings.NewReader(text))
}

// rotate makes a new current key and keeps the one before it, which
// opens the ids sealed so far; older keys are dropped.
var rotate = &luaScript{keys: 1, src: `
local old = redis.call('GET', KEYS[1]) or ''
local prev = string.match(old, '^[^\n]+') or ''
redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. prev)
return 1`}

// Rotate makes a new current sealing key; the previous one still opens
// the ids it sealed. Replicas take it up with [Store.FollowKeys].
func (s *Store) Rotate(ctx context.Context) error {
	_, err := s.script(ctx, rotate, s.keysKey(), hex.EncodeToString(gateway.NewKey()))
	return err
}

// FollowKeys gives sealer the shared keys every interval until ctx is
// done, so that a rotation reaches every replica; keys are those it
// holds now. A Redis that lost them (restarted without persistence) gets
// back the keys in use rather than a new one, which would strand every
// session sealed so far. A failed read keeps the keys in use.
func (s *Store) FollowKeys(ctx context.Context, sealer *gateway.Sealer, keys [][]byte, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		got, err := s.keysOr(ctx, keys)
		if err == nil {
			err = sealer.SetKeys(got...)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("shared: could not read the session keys; keeping the ones in use", "err", err)
			}
			continue
		}
		keys = got
	}
}

func (s *Store) sessionKey(key, what string) string { return s.prefix + key + ":" + what }

func (s *Store) channel() string { return s.prefix + "session-changes" }

// Load returns what changed during session key: one round trip.
func (s *Store) Load(ctx context.Context, key string) (gateway.SessionState, error) {
	r, err := s.pipeline(ctx, cmd("GET", s.sessionKey(key, "end")), cmd("GET", s.sessionKey(key, "level")),
		cmd("SMEMBERS", s.sessionKey(key, "subs")))
	if err != nil {
		return gateway.SessionState{}, fmt.Errorf("redis: %w", err)
	}
	end, _ := redis.String(r[0], nil) // nil when not set
	level, _ := redis.String(r[1], nil)
	subs, err := redis.Strings(r[2], nil)
	if err != nil {
		return gateway.SessionState{}, fmt.Errorf("redis: %w", err)
	}
	return gateway.SessionState{Ended: end != "", Level: level, Subscriptions: subs}, nil
}

// Change records c, every key of it to expire after ttl, and publishes
// it to the other replicas: one round trip.
func (s *Store) Change(ctx context.Context, c gateway.SessionChange, ttl time.Duration) error {
	msg, err := json.Marshal(c)
	if err != nil {
		return err
	}
	// At least a millisecond: PX and PEXPIRE take no less.
	cmds := append(s.changeCommands(c, max(ttl.Milliseconds(), 1)), cmd("PUBLISH", s.channel(), msg))
	if err := s.transaction(ctx, cmds...); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// changeCommands record c, to expire after ttl milliseconds.
func (s *Store) changeCommands(c gateway.SessionChange, ttl int64) []command {
	subs := s.sessionKey(c.Key, "subs")
	switch c.Op {
	case gateway.ChangeLevel:
		return []command{cmd("SET", s.sessionKey(c.Key, "level"), c.Value, "PX", ttl)}
	case gateway.ChangeSubscribe:
		return []command{cmd("SADD", subs, c.Value), cmd("PEXPIRE", subs, ttl)}
	case gateway.ChangeUnsubscribe:
		return []command{cmd("SREM", subs, c.Value)}
	case gateway.ChangeEnd:
		return []command{cmd("SET", s.sessionKey(c.Key, "end"), "1", "PX", ttl), cmd("DEL", s.sessionKey(c.Key, "level"), subs)}
	}
	return nil
}

// Watch calls fn with every change any replica publishes until ctx is
// done. The subscription is made again after Redis comes back; changes
// published meanwhile are not seen (a replica that opens a copy of a
// session later reads them with Load).
func (s *Store) Watch(ctx context.Context, fn func(gateway.SessionChange)) {
	s.subscribe(ctx, s.channel(), func(payload []byte) {
		var c gateway.SessionChange
		if err := json.Unmarshal(payload, &c); err != nil {
			s.log.Warn("shared: a session change that is not one", "err", err)
			return
		}
		fn(c)
	})
}
