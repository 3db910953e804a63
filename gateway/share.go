package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// ReplicaOptions let replicas of one gateway, behind a load balancer with
// no affinity, serve each other's legacy sessions (Streamable HTTP).
//
// A session's id is sealed (see [Sealer]): it carries what every replica
// must know of the session (the client's initialize, hence its protocol
// version, capabilities and information; the caller it belongs to; when
// it expires), so that a replica that has not seen the session opens a
// copy of its own from the id alone, and a request to a session it
// already knows needs nothing but a map lookup. What changes during a
// session (its log level, its resource subscriptions, its end) is kept
// in Store, when there is one, and told to the other replicas.
//
// What is bound to one replica is not shared: an isolated server's
// process (a session on an endpoint that reaches one is served only by
// the replica that opened it: another forwards its requests there when
// the owner set Advertise, and answers 404 when it did not or is gone, so
// that the client initializes again), a GET stream (and without Events,
// the events kept to resume a stream), the HTTP+SSE transport's sessions.
type ReplicaOptions struct {
	// Sealer seals and opens session ids; the replicas share its keys.
	Sealer *Sealer
	// Store keeps what changes during sessions; nil shares nothing but
	// the ids.
	Store SessionStore
	// Lifetime is how long a session id is good for from its initialize
	// (default 24 hours): an id cannot be refreshed, so this is a bound
	// on a session's life, not on its idleness (which each replica
	// bounds as ever).
	Lifetime time.Duration
	// Replica names this replica (default: random at start).
	Replica string
	// Events, when set, keeps the events of the sessions' streams, for a
	// client to resume a stream with Last-Event-ID on any replica (see
	// [EventStore]); without it, a stream resumes on its replica only.
	Events EventStore
	// Advertise is where the other replicas reach this one
	// (http://10.0.0.5:8000): a session bound to this replica (its
	// isolated server's process) carries it in its sealed id, and another
	// replica forwards the session's requests here. Empty, another
	// replica answers such a session 404.
	Advertise string
}

// check reports what is wrong with o.
func (o *ReplicaOptions) check() error { return checkAdvertise(o.Advertise) }

// SessionStore keeps what changes during legacy sessions, for every
// replica: a Redis store is in package gateway/shared. Keys are digests of
// session ids, never the ids.
type SessionStore interface {
	// Load returns what is known of session key.
	Load(ctx context.Context, key string) (SessionState, error)
	// Change records c, to expire after ttl, and tells the other
	// replicas' Watch.
	Change(ctx context.Context, c SessionChange, ttl time.Duration) error
	// Watch calls fn with every change recorded by any replica until ctx
	// is done, reconnecting by itself.
	Watch(ctx context.Context, fn func(SessionChange))
}

// SessionState is what changed during a session.
type SessionState struct {
	Ended         bool
	Level         string
	Subscriptions []string
}

// SessionChange is one change to a session.
type SessionChange struct {
	Key     string   `json:"k"`
	Op      ChangeOp `json:"op"`
	Value   string   `json:"v,omitempty"`
	Replica string   `json:"r"` // the replica that made it
}

// ChangeOp names a change.
type ChangeOp string

// The changes to a session.
const (
	ChangeLevel       ChangeOp = "level"
	ChangeSubscribe   ChangeOp = "subscribe"
	ChangeUnsubscribe ChangeOp = "unsubscribe"
	ChangeEnd         ChangeOp = "end"
)

// sealedSession is what a session id seals.
type sealedSession struct {
	Endpoint string         `json:"p"`
	Caller   string         `json:"c,omitempty"`
	Expires  int64          `json:"e"` // Unix seconds
	Params   jsontext.Value `json:"i"` // the client's initialize params
	Owner    string         `json:"o,omitempty"`
	// Advertise is where the other replicas reach Owner.
	Advertise string `json:"a,omitempty"`
}

// maxSealedParams bounds the initialize params a session id carries: the
// id travels in a header of every request, and balancers bound headers
// (HAProxy's whole request head defaults to 16 KiB).
const maxSealedParams = 4 << 10

// sharing is the gateway's side of ReplicaOptions: the legacy sessions of
// this replica by sealed id, each a session of the endpoint's own under a
// local id.
type sharing struct {
	g       *Gateway
	opts    ReplicaOptions
	mu      sync.Mutex
	byID    map[string]*shared
	byKey   map[string]*shared
	bySess  map[*server.Session]*shared
	opening map[string]chan struct{} // sealed ids being opened here
	pruned  int
	seq     atomic.Int64
	notes   *notes          // upstreams' notifications relayed to the other replicas (notify.go)
	owners  http.Handler    // forwards to the replica that owns a session (forward_owner.go)
	stopped context.Context // done once the gateway closes
}

// shared is one session of this replica.
type shared struct {
	id, key, local string
	caller         string
	expires        time.Time
	front          *front
	sess           *server.Session
}

func (s *shared) live(now time.Time) bool {
	select {
	case <-s.sess.Done():
		return false
	default:
		return now.Before(s.expires)
	}
}

func newSharing(g *Gateway, o ReplicaOptions) *sharing {
	if o.Lifetime <= 0 {
		o.Lifetime = 24 * time.Hour
	}
	if o.Replica == "" {
		o.Replica = rand.Text()
	}
	sh := &sharing{g: g, opts: o, byID: map[string]*shared{}, byKey: map[string]*shared{},
		bySess: map[*server.Session]*shared{}, opening: map[string]chan struct{}{}}
	var stop context.CancelFunc
	sh.stopped, stop = context.WithCancel(context.Background())
	g.wg.Go(func() {
		<-g.closing
		stop()
	})
	sh.owners = sh.newOwnerProxy()
	if o.Store != nil {
		g.wg.Go(func() { o.Store.Watch(sh.stopped, sh.apply) })
		sh.notes = newNotes(sh)
	}
	if o.Events != nil {
		newEventLog(sh, o.Events)
	}
	return sh
}

// storeKey names a session in the store: a digest, so that the store
// holds nothing that would let one use the session.
func storeKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "s:" + hex.EncodeToString(sum[:16])
}

// openingKey marks the context of a request that may open a session.
type openingKey struct{}

// opening is what the middleware learns of an initialize for wrap.
type opening struct {
	sess   *server.Session
	params jsontext.Value
	replay bool // a request of the gateway's own: nothing to share
}

// wrap serves a Streamable HTTP endpoint (its front given by frontOf)
// with sealed session ids: next is the endpoint as it is without them.
func (sh *sharing) wrap(next http.Handler, frontOf func(*http.Request) *front) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		if frontOf(r) == nil {
			next.ServeHTTP(w, r) // the HTTP+SSE transport's
			return
		}
		if id == "" {
			sh.serveNew(w, r, next, frontOf)
			return
		}
		s, status, msg := sh.session(r, id, next, frontOf)
		if s == nil {
			writeNotFound(w, status, msg)
			return
		}
		r.Header.Set(sessionHeader, s.local)
		rw := &resealing{ResponseWriter: w, local: s.local, id: s.id}
		next.ServeHTTP(rw, r)
		if r.Method == http.MethodDelete && rw.status/100 == 2 {
			sh.ended(r.Context(), s, true)
		}
	})
}

// serveNew serves a request without a session id: an initialize among
// them gets a sealed id.
func (sh *sharing) serveNew(w http.ResponseWriter, r *http.Request, next http.Handler, frontOf func(*http.Request) *front) {
	if r.Method != http.MethodPost || !protocol.IsLegacy(r.Header.Get("Mcp-Protocol-Version")) && r.Header.Get("Mcp-Protocol-Version") != "" {
		next.ServeHTTP(w, r) // a stateless request: nothing to seal
		return
	}
	op := &opening{}
	r = r.WithContext(context.WithValue(r.Context(), openingKey{}, op))
	rw := &resealing{ResponseWriter: w, open: func(local string) (string, error) {
		return sh.opened(r, op, local, frontOf(r))
	}}
	next.ServeHTTP(rw, r)
}

// opened registers the session an initialize opened under local, and
// returns its sealed id.
func (sh *sharing) opened(r *http.Request, op *opening, local string, f *front) (string, error) {
	if op.sess == nil || f == nil {
		return "", errors.New("no session was opened")
	}
	if len(op.params) > maxSealedParams {
		return "", fmt.Errorf("the initialize params are %d bytes: more than the %d a session shared by replicas may carry", len(op.params), maxSealedParams)
	}
	ss := sealedSession{Endpoint: r.URL.Path, Caller: callerOf(r.Context()),
		Expires: time.Now().Add(sh.opts.Lifetime).Unix(), Params: op.params}
	if f.pinned() {
		ss.Owner, ss.Advertise = sh.opts.Replica, sh.opts.Advertise
	}
	plain, err := json.Marshal(ss)
	if err != nil {
		return "", err
	}
	id := sh.opts.Sealer.seal(plain)
	sh.add(&shared{id: id, key: storeKey(id), local: local, caller: ss.Caller,
		expires: time.Unix(ss.Expires, 0), front: f, sess: op.sess})
	return id, nil
}

// pinned reports whether a session of the endpoint may reach an isolated
// server's process, which lives on one replica only.
func (f *front) pinned() bool {
	for _, u := range f.upstreams() {
		if u.isolated {
			return true
		}
	}
	return false
}

func (sh *sharing) add(s *shared) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.byID[s.id]; old != nil {
		delete(sh.bySess, old.sess)
	}
	sh.byID[s.id], sh.byKey[s.key], sh.bySess[s.sess] = s, s, s
	if len(sh.byID) > 2*sh.pruned+64 {
		now := time.Now()
		for id, e := range sh.byID {
			if !e.live(now) {
				sh.dropLocked(id)
			}
		}
		sh.pruned = len(sh.byID)
	}
}

func (sh *sharing) dropLocked(id string) {
	if e := sh.byID[id]; e != nil {
		delete(sh.byID, id)
		delete(sh.byKey, e.key)
		delete(sh.bySess, e.sess)
	}
}

// session returns this replica's session of sealed id, opening a copy of
// it first when there is none: nil, with the status and message to
// answer, when the id is not one to serve.
func (sh *sharing) session(r *http.Request, id string, next http.Handler, frontOf func(*http.Request) *front) (*shared, int, string) {
	caller := callerOf(r.Context())
	for {
		sh.mu.Lock()
		s := sh.byID[id]
		wait := sh.opening[id]
		if s == nil && wait == nil {
			wait = make(chan struct{})
			sh.opening[id] = wait
			sh.mu.Unlock()
			s, status, msg := sh.reopen(r, id, next, frontOf)
			sh.mu.Lock()
			delete(sh.opening, id)
			close(wait)
			sh.mu.Unlock()
			return s, status, msg
		}
		sh.mu.Unlock()
		if s != nil {
			if s.caller != caller {
				return nil, http.StatusNotFound, "session not found"
			}
			if s.live(time.Now()) {
				return s, 0, ""
			}
			sh.mu.Lock()
			if sh.byID[id] == s {
				sh.dropLocked(id)
			}
			sh.mu.Unlock()
			continue
		}
		select {
		case <-wait:
		case <-r.Context().Done():
			return nil, http.StatusServiceUnavailable, "the request ended while its session was being opened"
		}
	}
}

// reopen opens this replica's copy of a session another replica (or this
// one, before its copy ended) opened: the sealed initialize is served
// again, then what the store says changed since.
func (sh *sharing) reopen(r *http.Request, id string, next http.Handler, frontOf func(*http.Request) *front) (*shared, int, string) {
	ss, err := sh.unseal(id)
	f := frontOf(r)
	switch {
	case err != nil || ss.Endpoint != r.URL.Path || f == nil:
		return nil, http.StatusNotFound, "session not found: send initialize again"
	case time.Now().Unix() >= ss.Expires:
		return nil, http.StatusNotFound, "session expired: send initialize again"
	case ss.Caller != callerOf(r.Context()):
		return nil, http.StatusNotFound, "session not found"
	case ss.Owner != "" && ss.Owner != sh.opts.Replica:
		return nil, http.StatusNotFound, "session not found: it reached an isolated server's process on another replica; send initialize again"
	}
	key := storeKey(id)
	var st SessionState
	if sh.opts.Store != nil {
		if st, err = sh.opts.Store.Load(r.Context(), key); err != nil {
			return nil, http.StatusServiceUnavailable, "the session's state could not be read from the store shared by the gateway's replicas: " + err.Error()
		}
		if st.Ended {
			return nil, http.StatusNotFound, "session ended: send initialize again"
		}
	}
	s, err := sh.replayInitialize(r, &ss, next)
	if err != nil {
		sh.g.log.Warn("gateway: could not open a copy of a session of another replica", "err", err)
		return nil, http.StatusNotFound, "session not found: send initialize again"
	}
	s.id, s.key, s.front = id, key, f
	sh.add(s)
	sh.restore(s, st)
	return s, 0, ""
}

// unseal returns what session id seals.
func (sh *sharing) unseal(id string) (sealedSession, error) {
	var ss sealedSession
	plain, err := sh.opts.Sealer.open(id)
	if err == nil {
		err = json.Unmarshal(plain, &ss)
	}
	return ss, err
}

// replayInitialize serves the sealed initialize and the initialized
// notification through next, as the client once sent them, and returns
// the session they opened.
func (sh *sharing) replayInitialize(r *http.Request, ss *sealedSession, next http.Handler) (*shared, error) {
	op := &opening{replay: true}
	ctx := context.WithValue(r.Context(), openingKey{}, op)
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"ferry-reopen","method":"initialize","params":%s}`, ss.Params)
	rec := sh.replay(ctx, r, next, "", "", body)
	local := rec.header.Get(sessionHeader)
	if rec.status != http.StatusOK || local == "" || op.sess == nil {
		return nil, fmt.Errorf("initialize answered %d: %s", rec.status, bytes.TrimSpace(rec.body.Bytes()))
	}
	version := op.sess.ProtocolVersion()
	rec = sh.replay(ctx, r, next, local, version, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if rec.status/100 != 2 {
		return nil, fmt.Errorf("notifications/initialized answered %d", rec.status)
	}
	return &shared{local: local, caller: ss.Caller, expires: time.Unix(ss.Expires, 0), sess: op.sess}, nil
}

// restore brings a reopened session to the state the store keeps.
func (sh *sharing) restore(s *shared, st SessionState) {
	if st.Level != "" {
		sh.replayChange(s, SessionChange{Op: ChangeLevel, Value: st.Level})
	}
	for _, uri := range st.Subscriptions {
		sh.replayChange(s, SessionChange{Op: ChangeSubscribe, Value: uri})
	}
}

// apply makes a change another replica recorded to this replica's copy
// of the session.
func (sh *sharing) apply(c SessionChange) {
	if c.Replica == sh.opts.Replica {
		return
	}
	if c.Op == ChangeNotify {
		sh.relayed(c)
		return
	}
	sh.mu.Lock()
	s := sh.byKey[c.Key]
	sh.mu.Unlock()
	if s == nil {
		return
	}
	if c.Op == ChangeEnd {
		sh.ended(context.Background(), s, false)
		return
	}
	sh.replayChange(s, c)
}

// replayChange makes change c to s as its client would, with a request of
// the gateway's own to the endpoint.
func (sh *sharing) replayChange(s *shared, c SessionChange) {
	var method string
	var params any
	switch c.Op {
	case ChangeLevel:
		method, params = protocol.MethodSetLevel, protocol.SetLevelParams{Level: protocol.LoggingLevel(c.Value)}
	case ChangeSubscribe:
		method, params = protocol.MethodResourcesSubscribe, protocol.SubscribeParams{URI: c.Value}
	case ChangeUnsubscribe:
		method, params = protocol.MethodResourcesUnsubscribe, protocol.SubscribeParams{URI: c.Value}
	default:
		return
	}
	p, _ := json.Marshal(params)
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"ferry-replay-%d","method":%q,"params":%s}`, sh.seq.Add(1), method, p)
	ctx := context.WithValue(context.Background(), openingKey{}, &opening{replay: true})
	ctx = withCallerID(ctx, s.caller)
	rec := sh.replay(ctx, nil, s.front.http, s.local, s.sess.ProtocolVersion(), body)
	if rec.status != http.StatusOK || bytes.Contains(rec.body.Bytes(), []byte(`"error"`)) {
		sh.g.log.Warn("gateway: a change to a session shared by replicas failed here", "change", string(c.Op), "status", rec.status)
	}
}

// ended ends this replica's copy of s; told, the client ended it here,
// and the other replicas are told.
func (sh *sharing) ended(ctx context.Context, s *shared, told bool) {
	sh.mu.Lock()
	if sh.byID[s.id] == s {
		sh.dropLocked(s.id)
	}
	sh.mu.Unlock()
	if told {
		if sh.opts.Store != nil {
			if err := sh.change(ctx, s, ChangeEnd, ""); err != nil {
				sh.g.log.Warn("gateway: the end of a session could not be shared with the other replicas", "err", err)
			}
		}
		return
	}
	ctx = withCallerID(context.Background(), s.caller)
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://localhost"+s.front.path(), nil)
	req.Header.Set(sessionHeader, s.local)
	s.front.http.ServeHTTP(&recorder{header: http.Header{}}, req)
}

// path is the endpoint's Streamable HTTP path.
func (f *front) path() string {
	if f.only != nil {
		return "/servers/" + f.only.name + "/mcp"
	}
	return "/mcp"
}

func (sh *sharing) change(ctx context.Context, s *shared, op ChangeOp, value string) error {
	ttl := time.Until(s.expires)
	if ttl <= 0 {
		return nil
	}
	return sh.opts.Store.Change(ctx, SessionChange{Key: s.key, Op: op, Value: value, Replica: sh.opts.Replica}, ttl)
}

// replay serves one request of the gateway's own through h: from is the
// client request it is made for (nil for none), local the session.
func (sh *sharing) replay(ctx context.Context, from *http.Request, h http.Handler, local, version string, body []byte) *recorder {
	path, host := "/mcp", "localhost"
	if from != nil {
		path, host = from.URL.Path, from.Host
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+host+path, bytes.NewReader(body))
	req.Host = host
	if from != nil {
		req.RemoteAddr = from.RemoteAddr
		for _, v := range []string{"name", "endpoint"} {
			req.SetPathValue(v, from.PathValue(v))
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if local != "" {
		req.Header.Set(sessionHeader, local)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	return rec
}

// middleware learns what wrap needs of each initialize, and shares the
// changes a client makes to its session.
func (sh *sharing) middleware(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
		if ir.Stateless {
			return next(ctx, ir)
		}
		op, _ := ctx.Value(openingKey{}).(*opening)
		switch ir.Method {
		case protocol.MethodInitialize:
			if op != nil {
				op.sess = server.RequestOf(ir).Session
				if raw, ok := ir.Params.(jsontext.Value); ok && !op.replay {
					op.params = bytes.Clone(raw)
				}
			}
			return next(ctx, ir)
		case protocol.MethodSetLevel, protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
			if op != nil && op.replay || sh.opts.Store == nil {
				return next(ctx, ir)
			}
			return sh.shareChange(ctx, ir, next)
		}
		return next(ctx, ir)
	}
}

// shareChange serves a change to a session and records it for the other
// replicas: a log level before it is set (the change fails whole when the
// store cannot take it), a subscription once the server took it.
func (sh *sharing) shareChange(ctx context.Context, ir *intercept.Request, next intercept.Handler) (intercept.Result, error) {
	sh.mu.Lock()
	s := sh.bySess[server.RequestOf(ir).Session]
	sh.mu.Unlock()
	if s == nil {
		return next(ctx, ir)
	}
	raw, _ := ir.Params.(jsontext.Value)
	var p struct {
		Level string `json:"level"`
		URI   string `json:"uri"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return next(ctx, ir) // the endpoint answers the error
	}
	op, value := ChangeLevel, p.Level
	switch ir.Method {
	case protocol.MethodResourcesSubscribe:
		op, value = ChangeSubscribe, p.URI
	case protocol.MethodResourcesUnsubscribe:
		op, value = ChangeUnsubscribe, p.URI
	}
	if op == ChangeLevel {
		if err := sh.change(ctx, s, op, value); err != nil {
			return intercept.Result{}, sh.unshared(err)
		}
		return next(ctx, ir)
	}
	res, err := next(ctx, ir)
	if err != nil {
		return res, err
	}
	if err := sh.change(ctx, s, op, value); err != nil {
		return intercept.Result{}, sh.unshared(err)
	}
	return res, nil
}

// unshared is the client's error for a change the store did not take:
// what went wrong (an address, a path of the store) goes to the log, not
// to the client.
func (sh *sharing) unshared(err error) error {
	sh.g.log.Warn("gateway: a session change could not be recorded in the store shared by replicas", "err", err)
	return errors.New("the change could not be shared with the gateway's other replicas (their store is unreachable): try again")
}

// resealing is the ResponseWriter of a request on a sealed session: the
// session id the endpoint answers with (its local one) goes out sealed.
// For a request that may open a session, open seals the new local id.
type resealing struct {
	http.ResponseWriter
	local, id string
	open      func(local string) (string, error)
	status    int
}

func (rw *resealing) WriteHeader(code int) {
	if rw.status != 0 {
		return
	}
	rw.status = code
	h := rw.Header()
	if local := h.Get(sessionHeader); local != "" {
		rw.reseal(h, local)
	}
	rw.ResponseWriter.WriteHeader(rw.status)
}

func (rw *resealing) reseal(h http.Header, local string) {
	switch {
	case local == rw.local:
		h.Set(sessionHeader, rw.id)
	case rw.open != nil:
		id, err := rw.open(local)
		if err != nil {
			// The session is this replica's only: the client is told so
			// rather than given an id the others would refuse.
			h.Del(sessionHeader)
			h.Set("Content-Type", "application/json")
			rw.status = http.StatusBadRequest
			rw.ResponseWriter.WriteHeader(rw.status)
			fmt.Fprintf(rw.ResponseWriter, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":%q}}`, "cannot open a session: "+err.Error())
			rw.ResponseWriter = discard{rw.ResponseWriter}
			rw.status = -1
			return
		}
		h.Set(sessionHeader, id)
	}
}

func (rw *resealing) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	return rw.ResponseWriter.Write(p)
}

// Flush and Unwrap keep what the handler finds through the writer
// (http.Flusher, http.ResponseController) as it was.
func (rw *resealing) Flush() {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(rw.ResponseWriter).Flush()
}

func (rw *resealing) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// discard drops the endpoint's answer once resealing answered instead.
type discard struct{ http.ResponseWriter }

func (discard) WriteHeader(int)             {}
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Flush()                      {}

// recorder keeps the answer to a request of the gateway's own.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
func (r *recorder) Flush() {}

func writeNotFound(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":%q}}`, msg)
}

// endpointFront returns the front a request to a Streamable HTTP endpoint
// reaches, nil for another transport's endpoint.
func (g *Gateway) endpointFront(r *http.Request) *front {
	if r.URL.Path == "/mcp" {
		return g.agg
	}
	if rest, isView := strings.CutPrefix(r.URL.Path, "/views/"); isView {
		name, isMCP := strings.CutSuffix(rest, "/mcp")
		if !isMCP {
			return nil
		}
		return g.viewFront(name)
	}
	rest, isOne := strings.CutPrefix(r.URL.Path, "/servers/")
	name, isMCP := strings.CutSuffix(rest, "/mcp")
	if !isOne || !isMCP {
		return nil
	}
	if u := g.upstream(name); u != nil {
		return u.front
	}
	return nil
}
