package gateway

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/protocol"
)

// ChangeNotify is no change to a session but a notification an upstream
// server sent one replica (a list changed, a resource updated), told to
// the others through the store's pub/sub: a client's GET stream, which
// carries such notifications, sits on one replica, which may not be the
// one that heard of it (each replica has an upstream connection, and a
// process of each stdio server, of its own). A change every replica
// hears of thus reaches a client once per replica: a notification only
// says to read again.
const ChangeNotify ChangeOp = "notify"

// note is what a ChangeNotify carries.
type note struct {
	Server string `json:"s"`
	Method string `json:"m"`
	URI    string `json:"u,omitempty"`
}

// noteQueue bounds the notifications waiting to be told to the other
// replicas, and those waiting to be told here: beyond it they are
// dropped (and counted in the log), for a store or clients too slow.
const noteQueue = 256

// notes relays the upstreams' notifications between replicas.
type notes struct {
	sh       *sharing
	out, in  chan note
	dropped  atomic.Int64
	lastWarn atomic.Int64 // Unix ns of the last warning of drops
}

// newNotes starts relaying until the gateway closes.
func newNotes(sh *sharing) *notes {
	n := &notes{sh: sh, out: make(chan note, noteQueue), in: make(chan note, noteQueue)}
	sh.g.wg.Go(n.publish)
	sh.g.wg.Go(n.tell)
	return n
}

// relay tells the other replicas what upstream server told this one:
// method, and the upstream's uri for a resource updated. It does not
// block; without a store it does nothing.
func (sh *sharing) relay(server, method, uri string) {
	if sh == nil || sh.notes == nil {
		return
	}
	sh.notes.queue(sh.notes.out, note{Server: server, Method: method, URI: uri})
}

// relayed takes a notification another replica relayed, to tell this
// replica's clients.
func (sh *sharing) relayed(c SessionChange) {
	var n note
	if sh.notes == nil || json.Unmarshal([]byte(c.Value), &n) != nil {
		return
	}
	sh.notes.queue(sh.notes.in, n)
}

func (n *notes) queue(q chan note, what note) {
	select {
	case q <- what:
	default:
		n.dropped.Add(1)
		n.warnDropped()
	}
}

// warnDropped logs the notifications dropped, once a minute at most.
func (n *notes) warnDropped() {
	now := time.Now().UnixNano()
	last := n.lastWarn.Load()
	if now-last < int64(time.Minute) || !n.lastWarn.CompareAndSwap(last, now) {
		return
	}
	n.sh.g.log.Warn("gateway: notifications relayed between replicas were dropped: the store or the clients are too slow", "dropped", n.dropped.Swap(0))
}

// publish tells the other replicas the notifications queued, one PUBLISH
// each.
func (n *notes) publish() {
	for {
		select {
		case what := <-n.out:
			v, _ := json.Marshal(what)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c := SessionChange{Op: ChangeNotify, Value: string(v), Replica: n.sh.opts.Replica}
			if err := n.sh.opts.Store.Change(ctx, c, time.Minute); err != nil {
				n.sh.g.log.Warn("gateway: a notification could not be relayed to the other replicas", "method", what.Method, "err", err)
			}
			cancel()
		case <-n.sh.g.closing:
			return
		}
	}
}

// tell tells this replica's clients the notifications the others
// relayed, as if its own upstream had sent them: to every endpoint that
// shows the upstream, a resource by its URI there.
func (n *notes) tell() {
	for {
		select {
		case what := <-n.in:
			n.tellOne(what)
		case <-n.sh.g.closing:
			return
		}
	}
}

func (n *notes) tellOne(what note) {
	u := n.sh.g.upstream(what.Server)
	if u == nil {
		return // not served here (a configuration the replicas do not share)
	}
	switch what.Method {
	case protocol.NotificationToolsListChanged, protocol.NotificationPromptsListChanged, protocol.NotificationResourcesListChanged:
		u.g.changed()
		for _, f := range u.g.frontsOf(u) {
			f.srv.NotifyListChanged(what.Method)
		}
	case protocol.NotificationResourceUpdated:
		for _, f := range u.g.frontsOf(u) {
			f.resourceUpdated(u, what.URI)
		}
	}
}
