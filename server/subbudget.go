package server

import "github.com/ferrymcp/ferry/jsonrpc"

// subscriptionOverhead is what one subscription counts besides its URI
// (or task id) against Options.MaxSubscriptionBytes: the map entry or
// slice element and the string's header, about.
const subscriptionOverhead = 64

// subscriptionBytes is what keeping key (a URI, a task id) for a
// subscription counts.
func subscriptionBytes(key string) int64 { return int64(len(key)) + subscriptionOverhead }

// reserveSubscriptions takes n bytes of the subscriptions' budget, shared
// by every session and listen stream, or refuses with an error that says
// so when it has not that much left.
func (s *Server) reserveSubscriptions(n int64) error {
	if n == 0 {
		return nil
	}
	if s.subBytes.Add(n) > int64(s.opts.MaxSubscriptionBytes) {
		s.subBytes.Add(-n)
		return jsonrpc.NewError(jsonrpc.CodeInternalError,
			"the server keeps as many resource subscriptions as it may (%d KiB over all clients): try again later", s.opts.MaxSubscriptionBytes>>10)
	}
	return nil
}

// releaseSubscriptions gives n bytes back to the budget.
func (s *Server) releaseSubscriptions(n int64) { s.subBytes.Add(-n) }

// filterBytes is what a listen stream's filter keeps for its life.
func filterBytes(uris, taskIDs []string) int64 {
	var n int64
	for _, k := range uris {
		n += subscriptionBytes(k)
	}
	for _, k := range taskIDs {
		n += subscriptionBytes(k)
	}
	return n
}
