package gateway

import (
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/server"
)

// A large tools/call result is passed on in the memory its upstream's
// transport read it into, lent (the Release of client.CallToolRaw's
// result), and given back once it has been encoded for the client, so
// that answers of 64 KiB make no garbage: at that size the collector is
// a large part of the gateway's cost. The Release goes up with the
// result callTool returns, through the middleware (metrics, traces, which
// see the result as the raw JSON it is), to the endpoint's server, which
// calls it once it has written the result (middleware that replaces the
// result calls it or drops it, as intercept.Result says).

// lent returns out, the result passed on for req, made of up, the
// upstream's: with up's Release when out lies in up's memory and req's
// client is a legacy one; else up's memory is given back now (out is a
// copy) or, for a stateless client, left to the collector: its tools/call
// may be answered over several requests (see forward), and is not lent.
func lent(req *server.Request, out, up intercept.Result) intercept.Result {
	outRaw, _ := out.Value.(jsontext.Value)
	upRaw, _ := up.Value.(jsontext.Value)
	switch {
	case up.Release == nil || req.Stateless():
	case shares(outRaw, upRaw):
		out.Release = up.Release // given back once written (lentResult)
	default:
		up.Release() // out is a copy
	}
	return out
}

// release gives back the memory of up, whose result was decoded (which
// copies what it keeps).
func release(up intercept.Result) {
	if up.Release != nil {
		up.Release()
	}
}

// shares reports whether b lies in the memory of raw.
func shares(b, raw []byte) bool {
	if len(b) == 0 || len(raw) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return start <= p && p < start+uintptr(len(raw))
}
