package gateway

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// EventStore keeps the events of the streams of legacy sessions for every
// replica, so that a client whose stream broke resumes it with
// Last-Event-ID on another replica: a Redis store is in package
// gateway/shared. A stream is named by the digest of its session's id
// and its number; a stream's events expire after a while without a new
// one, and a stream keeps its most recent events only.
type EventStore interface {
	// Append records events, their streams to expire after ttl.
	Append(ctx context.Context, events []StreamEvent, ttl time.Duration) error
	// Read returns the events of stream after seq; ok is false when the
	// store holds none of the stream (never, or no more).
	Read(ctx context.Context, stream string, after int64) (st StreamState, ok bool, err error)
}

// StreamEvent is one event of a stream, as an [EventStore] keeps it.
type StreamEvent struct {
	Stream string
	Seq    int64
	Data   []byte
	// Final marks a request's response, the last event of its stream.
	Final bool
	// Standalone marks an event of a session's GET stream.
	Standalone bool
	// Abandoned marks the end of a stream whose replica stopped before
	// its response: no more is to come.
	Abandoned bool
}

// StreamState is what [EventStore.Read] returns: the events asked for,
// and what the stream's newest event says of it.
type StreamState struct {
	Events     []StreamEvent
	Standalone bool
	Ended      bool // its response, or its abandonment, is recorded
}

const (
	// eventTTL is how long a stream's events are kept after its last.
	eventTTL = 10 * time.Minute
	// eventQueue bounds the events waiting to be recorded: beyond it,
	// events are kept on this replica only (and counted in the log).
	eventQueue = 4096
	// eventBatch is the most events recorded in one round trip.
	eventBatch = 256
	// followEvery is how often a stream resumed on another replica than
	// the one running its request is polled for new events.
	followEvery = 200 * time.Millisecond
)

// eventLog records the events of this replica's streams in the shared
// store and replays those of the other replicas' (the
// streamablehandler.EventLog of the gateway's endpoints).
type eventLog struct {
	sh      *sharing
	store   EventStore
	queue   chan recorded
	dropped atomic.Int64

	mu   sync.Mutex
	open map[string]int64 // streams recorded without their end: last seq
}

type recorded struct {
	sess *server.Session
	e    streamablehandler.LoggedEvent
}

// newEventLog starts recording the events of sh's sessions in store,
// until the gateway closes; the endpoints' handlers made from then on
// use it.
func newEventLog(sh *sharing, store EventStore) *eventLog {
	l := &eventLog{sh: sh, store: store, queue: make(chan recorded, eventQueue), open: map[string]int64{}}
	sh.g.opts.HTTP.Events = l
	sh.g.wg.Go(l.run)
	return l
}

// Record queues an event to record; a full queue drops it (the replica
// still holds it for a client that resumes here).
func (l *eventLog) Record(sess *server.Session, e streamablehandler.LoggedEvent) {
	select {
	case l.queue <- recorded{sess, e}:
	default:
		l.dropped.Add(1)
	}
}

// run records the queued events in batches until the gateway closes,
// then those still queued, and the end of the streams still open: their
// requests end with this replica.
func (l *eventLog) run() {
	batch := make([]StreamEvent, 0, eventBatch)
	for {
		select {
		case r := <-l.queue:
			l.append(l.fill(l.add(batch[:0], r)))
		case <-l.sh.g.closing:
			// What was queued before, at most a queue's worth.
			for range eventQueue/eventBatch + 1 {
				if batch = l.fill(batch[:0]); len(batch) == 0 {
					break
				}
				l.append(batch)
			}
			l.abandon()
			return
		}
	}
}

// fill adds to batch the events queued, up to eventBatch.
func (l *eventLog) fill(batch []StreamEvent) []StreamEvent {
	for len(batch) < eventBatch {
		select {
		case r := <-l.queue:
			batch = l.add(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// add appends r to batch in the store's terms, unless its session is
// not one shared with the other replicas.
func (l *eventLog) add(batch []StreamEvent, r recorded) []StreamEvent {
	key := l.sessionKey(r.sess)
	if key == "" {
		return batch
	}
	e := StreamEvent{Stream: streamName(key, r.e.Stream), Seq: r.e.Seq, Data: r.e.Data, Final: r.e.Final, Standalone: r.e.Standalone}
	l.mu.Lock()
	if e.Final {
		delete(l.open, e.Stream)
	} else if !e.Standalone {
		l.open[e.Stream] = e.Seq
	}
	l.mu.Unlock()
	return append(batch, e)
}

func (l *eventLog) append(batch []StreamEvent) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.store.Append(ctx, batch, eventTTL); err != nil {
		l.sh.g.log.Warn("gateway: events could not be recorded for the other replicas; a client resuming elsewhere misses them", "events", len(batch), "err", err)
	}
	if n := l.dropped.Swap(0); n > 0 {
		l.sh.g.log.Warn("gateway: events came faster than the store took them; a client resuming elsewhere misses them", "events", n)
	}
}

// abandon records the end of every stream whose request had not
// answered when the gateway closed.
func (l *eventLog) abandon() {
	l.mu.Lock()
	batch := make([]StreamEvent, 0, len(l.open))
	for name, seq := range l.open {
		batch = append(batch, StreamEvent{Stream: name, Seq: seq + 1, Abandoned: true})
	}
	clear(l.open)
	l.mu.Unlock()
	l.append(batch)
}

// sessionKey returns the store's name of a session of this replica, ""
// for one not shared.
func (l *eventLog) sessionKey(sess *server.Session) string {
	l.sh.mu.Lock()
	defer l.sh.mu.Unlock()
	if s := l.sh.bySess[sess]; s != nil {
		return s.key
	}
	return ""
}

func streamName(sessionKey string, num int64) string {
	return sessionKey + ":" + strconv.FormatInt(num, 10)
}

// Follow replays stream num of another copy of sess from the store: the
// events after seq, and for a request's stream those that follow, until
// its end, ctx's, or the stream's expiry.
func (l *eventLog) Follow(ctx context.Context, sess *server.Session, num, seq int64) (*streamablehandler.LoggedStream, bool) {
	key := l.sessionKey(sess)
	if key == "" {
		return nil, false
	}
	name := streamName(key, num)
	st, ok, err := l.store.Read(ctx, name, seq)
	if err != nil {
		l.sh.g.log.Warn("gateway: a stream to resume could not be read from the store", "err", err)
	}
	if !ok || len(st.Events) == 0 && st.Ended && !st.Standalone {
		return nil, false // unknown, or ended without a response to come
	}
	ch := make(chan streamablehandler.LoggedEvent, 16)
	go l.follow(ctx, name, num, seq, st, ch)
	return &streamablehandler.LoggedStream{Events: ch, Standalone: st.Standalone}, true
}

// follow sends st's events (of stream num, after seq last) on ch, then,
// for a request's stream, polls the store for more until its end; it
// closes ch.
func (l *eventLog) follow(ctx context.Context, name string, num, last int64, st StreamState, ch chan<- streamablehandler.LoggedEvent) {
	defer close(ch)
	poll := time.NewTicker(followEvery)
	defer poll.Stop()
	for {
		for _, e := range st.Events {
			if e.Abandoned {
				return
			}
			select {
			case ch <- streamablehandler.LoggedEvent{Stream: num, Seq: e.Seq, Data: e.Data, Final: e.Final, Standalone: e.Standalone}:
			case <-ctx.Done():
				return
			}
			if e.Final {
				return
			}
			last = e.Seq
		}
		if st.Standalone || st.Ended {
			return
		}
		select {
		case <-poll.C:
		case <-ctx.Done():
			return
		}
		next, ok, err := l.store.Read(ctx, name, last)
		if !ok || err != nil {
			return // expired, or the store is down: the client may resume again
		}
		st = next
	}
}
