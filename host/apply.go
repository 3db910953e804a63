package host

import (
	"context"

	"github.com/ferrymcp/ferry/config"
)

// Change says what [Host.Apply] did, by server name.
type Change struct {
	// Added are the servers of entries that are new.
	Added []string
	// Removed are the servers whose entries are gone; they were stopped.
	Removed []string
	// Restarted are the servers whose entries changed, or that had been
	// given up (Failed): they were stopped and started again.
	Restarted []string
}

// Empty reports whether nothing changed.
func (c Change) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Restarted) == 0
}

// Apply makes the host run a new configuration while it runs, as a
// long-lived program does when its configuration is read again: the
// servers of new entries are started, those of removed entries stopped,
// those of changed entries (see [config.Server.Runs]) or given up after crashes
// restarted; the others go on untouched, their calls in flight too.
// The error joins the failures to start, as [Host.Start]'s does; the
// servers that did start are usable either way.
func (h *Host) Apply(ctx context.Context, servers []*config.Server) (Change, error) {
	var ch Change
	var stop, start []*Server
	h.smu.Lock()
	old := h.byName
	next := make([]*Server, 0, len(servers))
	byName := make(map[string]*Server, len(servers))
	for _, cfg := range servers {
		if byName[cfg.Name] != nil {
			continue // the first entry of a name wins, as in New
		}
		s := old[cfg.Name]
		switch {
		case s == nil:
			s = newServer(h, cfg)
			ch.Added = append(ch.Added, cfg.Name)
		case !s.cfg.Runs(cfg) || s.gaveUp():
			stop = append(stop, s)
			s = newServer(h, cfg)
			ch.Restarted = append(ch.Restarted, cfg.Name)
		default:
			next, byName[cfg.Name] = append(next, s), s
			continue
		}
		if !cfg.Disabled {
			start = append(start, s)
		}
		next, byName[cfg.Name] = append(next, s), s
	}
	for _, s := range h.servers {
		if byName[s.cfg.Name] == nil {
			stop = append(stop, s)
			ch.Removed = append(ch.Removed, s.cfg.Name)
		}
	}
	h.servers, h.byName = next, byName
	h.smu.Unlock()
	for _, s := range stop {
		s.shutAndWait()
	}
	if len(stop) > 0 {
		h.mu.Lock()
		h.names = nil // routes to stopped servers; the next Tools makes them again
		h.mu.Unlock()
	}
	return ch, startAll(ctx, start)
}

// gaveUp reports whether the server was given up after failing (not for
// an error of its entry, which a restart would not fix).
func (s *Server) gaveUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == Failed && s.cfg.Err == nil
}
