package jsonrpcapi

import "github.com/ferrymcp/ferry/internal/jsonfast"

// WireRefMin is the length from which a [Wire] refers to a string rather
// than copying it: below it, a copy costs less than a piece of a vectored
// write.
const WireRefMin = 16 << 10

// Wire is a message encoded for a vectored write (writev(2), net.Buffers)
// by jsonrpc2.EncodeWire. Long strings of the bodies ferry's own types
// encode (a tool's text result, the arguments of a call) are not copied
// into it but referred to, and written from the memory they are in: a
// large answer goes out without a buffer of its own. Its bytes are what
// jsonrpc.AppendMessage produces, in pieces.
//
// A Wire refers to memory it does not own until [Wire.Reset]: reset one
// before putting it back in a pool.
type Wire struct {
	// Out is the encoding; only EncodeWire writes it.
	Out jsonfast.Out
}

// Reset empties w and drops the strings it refers to.
func (w *Wire) Reset() { w.Out.Reset() }

// Len is the length of the encoding.
func (w *Wire) Len() int { return w.Out.Len() }

// Refers reports whether w refers to strings; when it does not, the
// whole encoding is [Wire.Bytes].
func (w *Wire) Refers() bool { return len(w.Out.Refs) > 0 }

// Lent reports whether w refers to memory lent only while the
// encoding is in its owner's hands (jsonfast.Out.Lent): a transport
// that keeps w once its Write returned must [Wire.Own] it first.
func (w *Wire) Lent() bool { return w.Out.Lent }

// Own copies what w refers to into its own bytes.
func (w *Wire) Own() { w.Out.Flatten() }

// Bytes returns w's own bytes: the encoding without the strings it
// refers to. The caller may change them in place.
func (w *Wire) Bytes() []byte { return w.Out.B }

// Write appends p to w's own bytes (after the encoding).
func (w *Wire) Write(p []byte) (int, error) {
	w.Out.B = append(w.Out.B, p...)
	return len(p), nil
}

// Buffers appends the pieces of the encoding to dst, in order. The
// pieces w refers to must not be modified.
func (w *Wire) Buffers(dst [][]byte) [][]byte { return w.Out.Buffers(dst) }
