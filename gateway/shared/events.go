package shared

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

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
	var cmds []command
	var keys []string
	for _, e := range events {
		key := s.streamKey(e.Stream)
		id := strconv.FormatInt(e.Seq, 10) + "-0"
		cmds = append(cmds, cmd("XADD", append([]any{key, "MAXLEN", "~", streamMaxLen, id}, fields(e)...)...))
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	for _, key := range keys {
		cmds = append(cmds, cmd("PEXPIRE", key, max(ttl.Milliseconds(), 1))) // after the XADDs that make it
	}
	replies, err := s.pipelineReplies(ctx, cmds...)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	for _, r := range replies {
		if e, ok := r.(redis.Error); ok && !strings.Contains(string(e), "equal or smaller") {
			return fmt.Errorf("redis: %w", e)
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
	r, err := s.pipeline(ctx, cmd("XRANGE", key, strconv.FormatInt(after+1, 10)+"-0", "+", "COUNT", readCount),
		cmd("XREVRANGE", key, "+", "-", "COUNT", 1))
	if err != nil {
		return gateway.StreamState{}, false, fmt.Errorf("redis: %w", err)
	}
	events, err := entries(stream, r[0])
	if err != nil {
		return gateway.StreamState{}, false, err
	}
	newest, err := entries(stream, r[1])
	if err != nil || len(newest) == 0 {
		return gateway.StreamState{}, false, err
	}
	last := newest[0]
	return gateway.StreamState{Events: events, Standalone: last.Standalone, Ended: last.Final || last.Abandoned}, true, nil
}

// entries reads the entries of a stream that XRANGE answered: each its
// id and its fields.
func entries(stream string, reply any) ([]gateway.StreamEvent, error) {
	items, err := redis.Values(reply, nil)
	if err != nil {
		return nil, fmt.Errorf("redis: a stream's entries: %w", err)
	}
	events := make([]gateway.StreamEvent, 0, len(items))
	for _, item := range items {
		var id string
		var fields map[string]string
		entry, err := redis.Values(item, nil)
		if err == nil && len(entry) != 2 {
			err = fmt.Errorf("an entry of %d values", len(entry))
		}
		if err == nil {
			id, err = redis.String(entry[0], nil)
		}
		if err == nil {
			fields, err = redis.StringMap(entry[1], nil)
		}
		if err != nil {
			return nil, fmt.Errorf("redis: a stream's entry: %w", err)
		}
		events = append(events, event(stream, id, fields))
	}
	return events, nil
}

// event reads an entry of a stream.
func event(stream, id string, fields map[string]string) gateway.StreamEvent {
	seq, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(seq, 10, 64)
	flag := func(name string) bool { _, ok := fields[name]; return ok }
	return gateway.StreamEvent{Stream: stream, Seq: n, Data: []byte(fields["d"]),
		Final: flag("f"), Standalone: flag("g"), Abandoned: flag("x")}
}
