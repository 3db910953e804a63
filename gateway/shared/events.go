package shared

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ferrymcp/ferry/gateway"
)

// streamMaxLen bounds the events kept per stream, about: a stream's
// oldest go first (progress notifications, mostly; a request's response
// is its last).
const streamMaxLen = 1000

// readCount bounds the events one Read returns; the rest come with the
// next.
const readCount = 256

func (s *Store) streamKey(stream string) string { return s.prefix + "ev:" + stream }

// Append records events as entries of a Redis stream each, numbered by
// their sequence number, every stream to expire after ttl: one round
// trip. An event already recorded (the same number) is skipped.
func (s *Store) Append(ctx context.Context, events []gateway.StreamEvent, ttl time.Duration) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		var keys []string
		for _, e := range events {
			key := s.streamKey(e.Stream)
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: streamMaxLen, Approx: true,
				ID: strconv.FormatInt(e.Seq, 10) + "-0", Values: fields(e)})
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
		for _, key := range keys {
			p.Expire(ctx, key, ttl) // after the XADDs that make it
		}
		return nil
	})
	if err == nil {
		return nil
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil && !strings.Contains(err.Error(), "equal or smaller") {
			return fmt.Errorf("redis: %w", err)
		}
	}
	return nil
}

// fields are an event's entry: its data, and flags only when set.
func fields(e gateway.StreamEvent) []any {
	f := []any{"d", e.Data}
	for name, set := range map[string]bool{"f": e.Final, "g": e.Standalone, "x": e.Abandoned} {
		if set {
			f = append(f, name, "1")
		}
	}
	return f
}

// Read returns the events of stream after seq and what its newest says
// of it: one round trip.
func (s *Store) Read(ctx context.Context, stream string, after int64) (gateway.StreamState, bool, error) {
	key := s.streamKey(stream)
	var events, newest *redis.XMessageSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		events = p.XRangeN(ctx, key, strconv.FormatInt(after+1, 10)+"-0", "+", readCount)
		newest = p.XRevRangeN(ctx, key, "+", "-", 1)
		return nil
	})
	if err != nil {
		return gateway.StreamState{}, false, fmt.Errorf("redis: %w", err)
	}
	if len(newest.Val()) == 0 {
		return gateway.StreamState{}, false, nil
	}
	last := event(stream, newest.Val()[0])
	st := gateway.StreamState{Standalone: last.Standalone, Ended: last.Final || last.Abandoned}
	for _, m := range events.Val() {
		st.Events = append(st.Events, event(stream, m))
	}
	return st, true, nil
}

// event reads an entry of a stream.
func event(stream string, m redis.XMessage) gateway.StreamEvent {
	seq, _, _ := strings.Cut(m.ID, "-")
	n, _ := strconv.ParseInt(seq, 10, 64)
	data, _ := m.Values["d"].(string)
	flag := func(name string) bool { _, ok := m.Values[name]; return ok }
	return gateway.StreamEvent{Stream: stream, Seq: n, Data: []byte(data),
		Final: flag("f"), Standalone: flag("g"), Abandoned: flag("x")}
}
