package gateway

import (
	"context"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
)

// A large tools/call result is passed on in the memory its upstream's
// transport read it into, lent (client.CallToolRawLent), and given back
// once it has been encoded for the client, so that answers of 64 KiB make
// no garbage: at that size the collector is a large part of the
// gateway's cost. The loan goes from the forwarding (callTool) to the
// outermost middleware (lending) in a loanSlot: the middleware in
// between (metrics, traces) sees the result as the raw JSON it is, and
// the endpoint's server gets it with its Release.

// lendKey finds the loanSlot in a request's context.
type lendKey struct{}

// loanSlot is the context of a legacy client's tools/call below the
// lending middleware, and where its forwarding leaves a loan: the result
// it returned, and the loan of the memory that result is in.
type loanSlot struct {
	context.Context
	out  jsontext.Value
	loan client.Loan
}

func (s *loanSlot) Value(key any) any {
	if key == (lendKey{}) {
		return s
	}
	return s.Context.Value(key)
}

// slotOf returns the loanSlot of ctx, nil when its request's result
// cannot be lent.
func slotOf(ctx context.Context) *loanSlot {
	s, _ := ctx.Value(lendKey{}).(*loanSlot)
	return s
}

// lend records that out, the result the forwarding returns, is in the
// memory of loan.
func (s *loanSlot) lend(out jsontext.Value, loan client.Loan) {
	s.out, s.loan = out, loan
}

// lending is the middleware, outside all others, that gives the result
// of a legacy client's tools/call the release of its memory when its
// forwarding lent it: the endpoint's server gives it back once it has
// written the result to the client. A stateless client's tools/call may
// be answered over several requests (see forward), and is not lent. A
// result the middleware in between replaced is not either: the lent
// memory is then left to the collector, as something may still refer to
// it.
func lending(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
		if req.Method != protocol.MethodToolsCall || req.Stateless {
			return next(ctx, req)
		}
		slot := &loanSlot{Context: ctx}
		res, err := next(slot, req)
		if slot.out == nil || err != nil {
			return res, err
		}
		if raw, ok := res.Value.(jsontext.Value); ok && same(raw, slot.out) && res.Release == nil {
			res.Release = slot.loan.Return
		}
		return res, nil
	}
}

// same reports whether a and b are the same bytes in memory.
func same(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
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
