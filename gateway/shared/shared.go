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
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ferrymcp/ferry/gateway"
)

// Store is a Redis shared by the replicas of a gateway.
type Store struct {
	rdb    *redis.Client
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
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("redis: the URL is not a redis:// or rediss:// URL")
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	// One retry at most: a change that cannot be recorded fails with an
	// error at once rather than waiting through backoff.
	ro.MaxRetries = 1
	s := &Store{rdb: redis.NewClient(ro), prefix: o.Prefix, log: o.Logger}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.rdb.Close()
		return nil, fmt.Errorf("redis at %s: %w", ro.Addr, err)
	}
	return s, nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.rdb.Close() }

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
	if err := s.rdb.SetNX(ctx, s.keysKey(), strings.Join(lines, "\n"), 0).Err(); err != nil {
		return nil, fmt.Errorf("redis: session keys: %w", err)
	}
	text, err := s.rdb.Get(ctx, s.keysKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: session keys: %w", err)
	}
	return gateway.ReadKeys(strings.NewReader(text))
}

// rotate makes a new current key and keeps the one before it, which
// opens the ids sealed so far; older keys are dropped.
var rotate = redis.NewScript(`
local old = redis.call('GET', KEYS[1]) or ''
local prev = string.match(old, '^[^\n]+') or ''
redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. prev)
return 1`)

// Rotate makes a new current sealing key; the previous one still opens
// the ids it sealed. Replicas take it up with [Store.FollowKeys].
func (s *Store) Rotate(ctx context.Context) error {
	return rotate.Run(ctx, s.rdb, []string{s.keysKey()}, hex.EncodeToString(gateway.NewKey())).Err()
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
	var end, level *redis.StringCmd
	var subs *redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		end = p.Get(ctx, s.sessionKey(key, "end"))
		level = p.Get(ctx, s.sessionKey(key, "level"))
		subs = p.SMembers(ctx, s.sessionKey(key, "subs"))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return gateway.SessionState{}, fmt.Errorf("redis: %w", err)
	}
	return gateway.SessionState{Ended: end.Val() != "", Level: level.Val(), Subscriptions: subs.Val()}, nil
}

// Change records c, every key of it to expire after ttl, and publishes
// it to the other replicas: one round trip.
func (s *Store) Change(ctx context.Context, c gateway.SessionChange, ttl time.Duration) error {
	msg, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		subs := s.sessionKey(c.Key, "subs")
		switch c.Op {
		case gateway.ChangeLevel:
			p.Set(ctx, s.sessionKey(c.Key, "level"), c.Value, ttl)
		case gateway.ChangeSubscribe:
			p.SAdd(ctx, subs, c.Value)
			p.Expire(ctx, subs, ttl)
		case gateway.ChangeUnsubscribe:
			p.SRem(ctx, subs, c.Value)
		case gateway.ChangeEnd:
			p.Set(ctx, s.sessionKey(c.Key, "end"), "1", ttl)
			p.Del(ctx, s.sessionKey(c.Key, "level"), subs)
		}
		p.Publish(ctx, s.channel(), msg)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// Watch calls fn with every change any replica publishes until ctx is
// done. The subscription reconnects by itself after Redis comes back;
// changes published meanwhile are not seen (a replica that opens a copy
// of a session later reads them with Load).
func (s *Store) Watch(ctx context.Context, fn func(gateway.SessionChange)) {
	sub := s.rdb.Subscribe(ctx, s.channel())
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			var c gateway.SessionChange
			if err := json.Unmarshal([]byte(m.Payload), &c); err != nil {
				s.log.Warn("shared: a session change that is not one", "err", err)
				continue
			}
			fn(c)
		}
	}
}
