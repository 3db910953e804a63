package server

import (
	"context"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// listener is one stateless subscriptions/listen stream.
type listener struct {
	id     jsonrpc.ID
	filter protocol.SubscriptionFilter
	peer   serverapi.Peer
	ctx    context.Context // the listen request's: transports route its notifications by it
}

func (l *listener) meta() protocol.Meta { return protocol.Meta{protocol.MetaSubscriptionID: l.id} }

func (l *listener) wants(method, uri string) bool {
	switch method {
	case protocol.NotificationToolsListChanged:
		return l.filter.ToolsListChanged
	case protocol.NotificationPromptsListChanged:
		return l.filter.PromptsListChanged
	case protocol.NotificationResourcesListChanged:
		return l.filter.ResourcesListChanged
	case protocol.NotificationResourceUpdated:
		return slices.Contains(l.filter.ResourceSubscriptions, uri)
	case protocol.NotificationTasks:
		return slices.Contains(l.filter.TaskIDs, uri)
	}
	return false
}

// listen serves subscriptions/listen: acknowledge, then deliver the
// chosen notifications until the client cancels or the server closes.
func (s *Server) listen(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	var p protocol.SubscriptionsListenParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if err := s.checkListen(&p); err != nil {
		return nil, err
	}
	if err := s.checkListenTasks(ctx, r, &p.Notifications); err != nil {
		return nil, err
	}
	kept := filterBytes(p.Notifications.ResourceSubscriptions, p.Notifications.TaskIDs)
	if err := s.reserveSubscriptions(kept); err != nil {
		return nil, err
	}
	defer s.releaseSubscriptions(kept)
	l := &listener{id: r.ID, filter: p.Notifications, peer: r.peer, ctx: ctx}
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	// "The server MUST send notifications/subscriptions/acknowledged as
	// the first message carrying the subscription's ID."
	if err := r.peer.Notify(ctx, protocol.NotificationSubscriptionsAcknowledged,
		&protocol.SubscriptionsAcknowledgedParams{Meta: l.meta(), Notifications: p.Notifications}); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-s.closed:
	case <-inputEnded(r.peer):
		// The client closed its side (stdio: its end of our stdin) and so
		// cannot cancel the stream: end it now rather than hold the
		// connection open until the drain times out.
	}
	// "When the server ends a subscription on its own initiative ... it
	// SHOULD respond to the original subscriptions/listen request with a
	// completion result."
	meta := l.meta()
	meta[protocol.MetaServerInfo] = s.impl
	res := &protocol.SubscriptionsListenResult{}
	res.ResultType, res.Meta = protocol.ResultComplete, meta
	return res, nil
}

// checkListen bounds what a listen stream keeps for its life: the
// resources it names, which it drops when the server has no resource
// subscriptions.
func (s *Server) checkListen(p *protocol.SubscriptionsListenParams) error {
	uris := p.Notifications.ResourceSubscriptions
	if len(uris) > s.opts.MaxSubscriptions {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%d resources to listen to: the limit is %d", len(uris), s.opts.MaxSubscriptions)
	}
	if len(uris) > 0 {
		if c := s.capabilities().Resources; c == nil || !c.Subscribe {
			// "Notification types the server does not support are omitted"
			// from the acknowledgment, and not kept.
			p.Notifications.ResourceSubscriptions = nil
			return nil
		}
	}
	for _, u := range uris {
		if len(u) > MaxURIBytes {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "a resource URI of %d bytes: the limit is %d", len(u), MaxURIBytes)
		}
	}
	return nil
}

// notifyTimeout bounds how long a change notification may wait on a slow
// client before it is dropped for that client.
const notifyTimeout = 5 * time.Second

// listChanged tells the clients that want to know that a list changed.
func (s *Server) listChanged(method string) { s.broadcast(method, "") }

// NotifyListChanged tells the clients that want to know that the tools,
// prompts or resources changed, for servers whose lists change outside
// the registries (a gateway whose upstream server's list changed): method
// is the notification's, such as [protocol.NotificationToolsListChanged].
// Legacy sessions get the notification, stateless clients on the
// subscriptions/listen streams that asked for it.
func (s *Server) NotifyListChanged(method string) { s.listChanged(method) }

// ResourceUpdated tells the clients subscribed to uri that it changed:
// legacy sessions that sent resources/subscribe and stateless listen streams
// whose resourceSubscriptions name it. ctx bounds the sending (each client
// gets at most 5 seconds besides); a client too slow for it misses the
// notification.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) {
	s.broadcastCtx(ctx, protocol.NotificationResourceUpdated, uri, nil)
}

// ResourceUpdatedFor is [Server.ResourceUpdated] to those of the clients
// subscribed to uri that may hear it, for a server that decides who may
// read what after they subscribed (a gateway whose access rules were
// read again): may gets a legacy session (listen nil) or the context
// of a stateless client's subscriptions/listen request (sess nil), which
// names its caller (intercept.CallerFrom).
func (s *Server) ResourceUpdatedFor(ctx context.Context, uri string, may func(sess *Session, listen context.Context) bool) {
	s.broadcastCtx(ctx, protocol.NotificationResourceUpdated, uri, may)
}

// broadcast is broadcastCtx for the changes the server makes on its own
// (registrations), bounded per client only.
func (s *Server) broadcast(method, uri string) {
	s.broadcastCtx(context.Background(), method, uri, nil)
}

// broadcastCtx sends the notification to the clients that want it and,
// unless may is nil, that may hear it.
func (s *Server) broadcastCtx(parent context.Context, method, uri string, may func(*Session, context.Context) bool) {
	s.mu.RLock()
	var sessions []*Session
	for sess := range s.sessions {
		if sess.isReady() && (uri == "" || sess.subscribed(uri)) {
			sessions = append(sessions, sess)
		}
	}
	var listeners []*listener
	for l := range s.listeners {
		if l.wants(method, uri) {
			listeners = append(listeners, l)
		}
	}
	s.mu.RUnlock()
	if may != nil {
		sessions = slices.DeleteFunc(sessions, func(sess *Session) bool { return !may(sess, nil) })
		listeners = slices.DeleteFunc(listeners, func(l *listener) bool { return !may(nil, l.ctx) })
	}
	for _, sess := range sessions {
		ctx, cancel := context.WithTimeout(parent, notifyTimeout)
		var params any
		if uri != "" {
			params = &protocol.ResourceUpdatedParams{URI: uri}
		}
		if err := sess.peer.Notify(ctx, method, params); err != nil {
			s.log.Debug("server: notification not delivered", "method", method, "error", err)
		}
		cancel()
	}
	for _, l := range listeners {
		var params any = &struct {
			Meta protocol.Meta `json:"_meta"`
		}{l.meta()}
		if uri != "" {
			params = &protocol.ResourceUpdatedParams{Meta: l.meta(), URI: uri}
		}
		ctx, cancel := context.WithTimeout(l.ctx, notifyTimeout)
		stop := context.AfterFunc(parent, cancel)
		l.peer.Notify(ctx, method, params)
		stop()
		cancel()
	}
}
