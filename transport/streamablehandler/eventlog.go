package streamablehandler

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"net/http"
	"time"

	"github.com/ferrymcp/ferry/internal/httpdeadline"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/internal/streamwire"
	"github.com/ferrymcp/ferry/server"
)

// EventLog keeps the events of legacy sessions' streams beyond one
// handler, so that a client whose stream broke resumes it with
// Last-Event-ID on another handler serving a copy of the same session:
// another replica behind a load balancer (see package gateway's
// ReplicaOptions). With a log, a session numbers its streams from a
// random start, so that the event ids of two copies of a session do not
// meet: a Last-Event-ID of a stream the handler does not know is one of
// another copy's, which the log is asked for.
type EventLog interface {
	// Record is told each event of an event stream as the handler keeps
	// it. It must not block (the handler holds the session's lock) nor
	// change e.Data.
	Record(sess *server.Session, e LoggedEvent)
	// Follow returns the events of stream after seq that the log holds,
	// and for a request's stream those that follow until its last; ok is
	// false when the log does not know the stream. The channel closes
	// once there is no more to send, or ctx is done.
	Follow(ctx context.Context, sess *server.Session, stream, seq int64) (ls *LoggedStream, ok bool)
}

// LoggedEvent is one event of a stream, for an [EventLog].
type LoggedEvent struct {
	Stream, Seq int64
	Data        []byte // the JSON-RPC message
	// Final marks a request stream's last event, its response.
	Final bool
	// Standalone marks an event of the session's GET stream.
	Standalone bool
}

// LoggedStream is a stream an [EventLog] replays.
type LoggedStream struct {
	Events <-chan LoggedEvent
	// Standalone is set for another copy's GET stream: once its events
	// are replayed, the client opens this copy's own.
	Standalone bool
}

// firstStream is the number before a session's first stream: 0, or with
// an event log a random one below 2^47 (so that a copy's ids meet
// another's with a chance of about streams²/2^47).
func (h *Handler) firstStream() int64 {
	if h.opts.Events == nil {
		return 0
	}
	var b [8]byte
	rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) >> 17)
}

// record tells the log of an event the store took. Callers hold s.mu.
func (s *session) record(st *stream, e event, final bool) {
	if log := s.h.opts.Events; log != nil {
		log.Record(s.srv, LoggedEvent{Stream: e.stream, Seq: e.seq, Data: e.data, Final: final, Standalone: !st.req.IsValid()})
	}
}

// resumeLogged answers a GET whose Last-Event-ID names stream num of
// another copy of the session, from the log: false, having written
// nothing, when the log does not know it. A GET stream's events are
// replayed and the response ends, for the client to open this copy's own
// (at once when there are none to replay); a request stream's are
// followed to its response.
func (s *session) resumeLogged(w http.ResponseWriter, r *http.Request, num, seq int64) bool {
	log := s.h.opts.Events
	if log == nil {
		return false
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ls, ok := log.Follow(ctx, s.srv, num, seq)
	if !ok {
		return false
	}
	var first LoggedEvent
	if ls.Standalone {
		if first, ok = <-ls.Events; !ok {
			r.Header.Del(streamwire.HeaderLastEventID)
			s.serveGet(w, r)
			return true
		}
	}
	httpdeadline.Write(w, s.h.opts.WriteTimeout)
	startSSE(w, http.StatusOK)
	flush(w)
	if ls.Standalone && !s.writeLogged(w, first) {
		return true
	}
	s.copyLogged(w, r, ls.Events)
	return true
}

// copyLogged writes the events of a logged stream until it ends, the
// client goes away or the session ends, with keep-alive comments.
func (s *session) copyLogged(w http.ResponseWriter, r *http.Request, events <-chan LoggedEvent) {
	var keepAlive <-chan time.Time
	if ka := s.h.opts.KeepAlive; ka > 0 {
		t := time.NewTicker(ka)
		defer t.Stop()
		keepAlive = t.C
	}
	for {
		select {
		case e, ok := <-events:
			if !ok || !s.writeLogged(w, e) || e.Final {
				return
			}
		case <-keepAlive:
			httpdeadline.Write(w, s.h.opts.WriteTimeout)
			if _, err := w.Write(ssewire.AppendComment(nil, "")); err != nil || flushed(w) != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
}

// writeLogged writes one logged event, reporting whether it went out.
func (s *session) writeLogged(w http.ResponseWriter, e LoggedEvent) bool {
	httpdeadline.Write(w, s.h.opts.WriteTimeout)
	if _, err := w.Write(appendEvent(nil, eventID(e.Stream, e.Seq), e.Data)); err != nil {
		return false
	}
	return flushed(w) == nil
}
