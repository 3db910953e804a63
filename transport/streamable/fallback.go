package streamable

import "github.com/ferrymcp/ferry/jsonrpc"

// FellBack reports whether s, a stream that [Transport.Open] returned,
// fell back to the HTTP+SSE transport of 2024-11-05 because the server
// does not speak Streamable HTTP (known once initialize is answered). It
// is false for any other stream, so that a host can say which transport
// a server is reached by.
func FellBack(s jsonrpc.Stream) bool {
	cs, ok := s.(*clientStream)
	if !ok {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.fallback != nil
}
