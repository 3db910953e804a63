package server

import (
	"context"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// Run serves one stream (a stdio pipe, an in-memory pipe) until it closes
// or ctx is cancelled: one connection, one legacy session for clients that
// initialize, and any number of modern requests.
//
// When the client closes its side, the answers being computed are still
// sent (for up to [Options.DrainTimeout]) before Run returns.
func (s *Server) Run(ctx context.Context, stream jsonrpc.Stream) error {
	conn := s.Connect(ctx, stream)
	return conn.Wait()
}

// Connect starts serving stream and returns its connection; close it to
// stop. [Server.Run] is Connect followed by waiting.
func (s *Server) Connect(ctx context.Context, stream jsonrpc.Stream) *jsonrpc.Conn {
	h := &connHandler{server: s, ready: make(chan struct{})}
	conn := jsonrpc.NewConn(ctx, stream, &jsonrpc.ConnOptions{
		Handler:        h,
		MaxInFlight:    s.opts.MaxInFlight,
		ReplyToInvalid: true,
		DrainTimeout:   drainTimeout,
		Logger:         s.log,
	})
	h.session = s.NewSession(conn, "")
	close(h.ready)
	go func() {
		<-conn.Done()
		h.session.Close()
	}()
	return conn
}

// drainTimeout is how long answers being computed when the client closes
// its input may still be sent.
const drainTimeout = 5 * time.Second

// connHandler serves the messages of one connection.
type connHandler struct {
	server  *Server
	session *Session
	ready   chan struct{} // closed once session is set
}

func (h *connHandler) Handle(ctx context.Context, m *jsonrpc.Message) (any, error) {
	<-h.ready
	return h.server.HandleMessage(ctx, m, h.session, h.session.peer)
}
