package server

import (
	"context"
	"log/slog"
	"strings"

	"github.com/ferrymcp/ferry/protocol"
)

// logHandler is a [slog.Handler] that sends records to an MCP client as
// notifications/message. The data of each message is an object with the
// record's message and attributes.
type logHandler struct {
	send    func(ctx context.Context, level protocol.LoggingLevel, logger string, data any)
	enabled func(protocol.LoggingLevel) bool
	logger  string
	attrs   []slog.Attr
	groups  []string
}

// mcpLevel maps slog levels onto the syslog levels MCP uses.
func mcpLevel(l slog.Level) protocol.LoggingLevel {
	switch {
	case l >= slog.LevelError+4:
		return protocol.LevelCritical
	case l >= slog.LevelError:
		return protocol.LevelError
	case l >= slog.LevelWarn:
		return protocol.LevelWarning
	case l >= slog.LevelInfo+2:
		return protocol.LevelNotice
	case l >= slog.LevelInfo:
		return protocol.LevelInfo
	}
	return protocol.LevelDebug
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return h.enabled(mcpLevel(l)) }

func (h *logHandler) Handle(ctx context.Context, rec slog.Record) error {
	data := map[string]any{"message": rec.Message}
	add := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		key := a.Key
		if len(h.groups) > 0 {
			key = strings.Join(h.groups, ".") + "." + key
		}
		data[key] = a.Value.Resolve().Any()
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	rec.Attrs(add)
	h.send(ctx, mcpLevel(rec.Level), h.logger, data)
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// ClientLog returns a [slog.Logger] whose records go to every legacy
// session's client as notifications/message (subject to each session's log
// level); the server's own diagnostics go to [Options].Logger instead. Logs
// about one request are better sent with [Request.ClientLog], which also
// reaches stateless clients that asked for them.
func (s *Server) ClientLog() *slog.Logger {
	return slog.New(&logHandler{
		logger:  s.impl.Name,
		enabled: func(protocol.LoggingLevel) bool { return true },
		send: func(ctx context.Context, level protocol.LoggingLevel, logger string, data any) {
			s.mu.RLock()
			var sessions []*Session
			for sess := range s.sessions {
				if sess.isReady() {
					sessions = append(sessions, sess)
				}
			}
			s.mu.RUnlock()
			for _, sess := range sessions {
				if min := sess.LogLevel(); min == "" || level.Rank() >= min.Rank() {
					sess.peer.Notify(ctx, protocol.NotificationMessage, &protocol.LoggingMessageParams{Level: level, Logger: logger, Data: data})
				}
			}
		},
	})
}
