package server

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Run serves one stream (a stdio pipe, an in-memory pipe) until it closes
// or ctx is cancelled: one connection, one legacy session for clients that
// initialize, and any number of stateless requests.
//
// When the client closes its side, the answers being computed are still
// sent (for a few seconds) before Run returns nil: a client that goes away
// is the normal end of a stdio server. Any other end is returned as an
// error wrapping [jsonrpc.ErrClosed] and its cause.
func (s *Server) Run(ctx context.Context, stream jsonrpc.Stream) error {
	sess := s.Connect(ctx, stream)
	if err := sess.Wait(); !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Connect starts serving stream and returns the session of its
// connection: [Session.Close] stops serving it, [Session.Wait] waits for
// its end. [Server.Run] is Connect followed by waiting.
func (s *Server) Connect(ctx context.Context, stream jsonrpc.Stream) *Session {
	_, sess := s.connectSession(ctx, stream, "")
	return sess
}

// connectSession is [Server.Connect] for transports that name their
// sessions (serverapi.Server.ConnectSession).
func (s *Server) connectSession(ctx context.Context, stream jsonrpc.Stream, id string) (*jsonrpc2.Conn, *Session) {
	ended := make(chan struct{})
	h := &connHandler{server: s, ready: make(chan struct{})}
	conn := jsonrpc2.NewConn(ctx, watchInputEnd(stream, ended), &jsonrpc2.ConnOptions{
		Handler:        h,
		MaxInFlight:    s.opts.MaxInFlight,
		ReplyToInvalid: true,
		Sequential:     func(m *jsonrpc.Message) bool { return m.Method == protocol.MethodInitialize },
		DrainTimeout:   drainTimeout,
		CancelMethod:   protocol.NotificationCancelled,
		Logger:         s.log,
	})
	h.session = s.newSession(conn, id)
	h.session.conn = conn
	h.peer = &connPeer{Conn: conn, inputEnded: ended}
	close(h.ready)
	// No goroutine waits for the end: an idle session holds none.
	jsonrpc2.OnClose(conn, h.session.end)
	return conn, h.session
}

// drainTimeout is how long answers being computed when the client closes
// its input may still be sent.
const drainTimeout = 5 * time.Second

// connHandler serves the messages of one connection.
type connHandler struct {
	server  *Server
	session *Session
	peer    *connPeer
	ready   chan struct{} // closed once session and peer are set
}

func (h *connHandler) Handle(ctx context.Context, m *jsonrpc.Message) (any, error) {
	<-h.ready
	return h.server.handleMessage(ctx, m, h.session, h.peer)
}

// connPeer is the peer of a connection served by connectSession: the
// connection, and when the client closed its side.
type connPeer struct {
	*jsonrpc2.Conn
	inputEnded chan struct{}
}

// watchInputEnd wraps stream so that ended is closed once the client
// closed its side cleanly (io.EOF): no request can come after it, not even
// the notifications/cancelled that would end a subscriptions/listen
// stream, which would otherwise hold the connection open for the whole
// drain. The wrapper keeps every capability of stream (jsonrpc.Observe).
func watchInputEnd(stream jsonrpc.Stream, ended chan struct{}) jsonrpc.Stream {
	var once sync.Once
	return jsonrpc.Observe(stream, jsonrpc.Observer{ReadError: func(err error) {
		if errors.Is(err, io.EOF) {
			once.Do(func() { close(ended) })
		}
	}})
}

// inputEnded returns a channel closed once the client of a connection
// served by connectSession closed its side; nil (never ready) for other
// peers.
func inputEnded(peer serverapi.Peer) <-chan struct{} {
	if p, ok := peer.(*connPeer); ok {
		return p.inputEnded
	}
	return nil
}
