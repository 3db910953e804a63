package websocket

import (
	"net"
	"net/http"
	"sync"
)

// shares counts a bounded resource (connections, bytes) in all and per
// caller: a reservation fits both bounds or is refused, both checked and
// taken under one lock, so that concurrent reservations never overshoot.
type shares struct {
	max, share int64

	mu    sync.Mutex
	total int64
	held  map[string]int64
}

func newShares(max, share int64) *shares {
	return &shares{max: max, share: share, held: map[string]int64{}}
}

// reserve takes n for caller, unless that would exceed the total or
// caller's share.
func (s *shares) reserve(caller string, n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total+n > s.max || s.held[caller]+n > s.share {
		return false
	}
	s.total += n
	s.held[caller] += n
	return true
}

// release gives back n that caller reserved.
func (s *shares) release(caller string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total -= n
	if s.held[caller] -= n; s.held[caller] <= 0 {
		delete(s.held, caller)
	}
}

// remoteAddr is the default caller of a request: its remote address's IP,
// or for IPv6 its /64 network, which a single host is commonly given
// whole.
func remoteAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		ip = ip.Mask(net.CIDRMask(64, 128))
	}
	return ip.String()
}
