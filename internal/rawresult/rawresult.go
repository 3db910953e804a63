// Package rawresult carries, in the context of a tools/call, whether its
// result, passed on as raw JSON, is a tool error: from the code that
// walked the result's members anyway (a gateway adapting it for its
// client) to the code that would walk them again for that alone (package
// observe, which counts tool errors, once for the request it serves and
// once for the call it forwards). A 64 KiB result is then walked once.
package rawresult

import (
	"context"
	"unsafe"
)

// A Memo is the context of one tools/call below the middleware that
// made it (With), where what is known of its raw result is left.
type Memo struct {
	context.Context
	raw     []byte // the result known, nil while none is
	isError bool
}

// key finds the Memo in a context.
type key struct{}

// Value returns m for its key, else the context's value.
func (m *Memo) Value(k any) any {
	if k == (key{}) {
		return m
	}
	return m.Context.Value(k)
}

// With returns a Memo below ctx.
func With(ctx context.Context) *Memo { return &Memo{Context: ctx} }

// Of returns the Memo of ctx, nil when there is none.
func Of(ctx context.Context) *Memo {
	m, _ := ctx.Value(key{}).(*Memo)
	return m
}

// Remember records whether raw, a tools/call result, is a tool error. A
// nil Memo records nothing. raw must not change while the Memo may be
// asked about it.
func (m *Memo) Remember(raw []byte, isError bool) {
	if m != nil && len(raw) > 0 {
		m.raw, m.isError = raw, isError
	}
}

// Lookup reports whether raw is a tool error, and ok when raw is the
// result remembered: the same bytes in memory. A nil Memo knows nothing.
func (m *Memo) Lookup(raw []byte) (isError, ok bool) {
	if m == nil || m.raw == nil || len(raw) != len(m.raw) || unsafe.SliceData(raw) != unsafe.SliceData(m.raw) {
		return false, false
	}
	return m.isError, true
}
