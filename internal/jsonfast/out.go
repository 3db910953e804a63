package jsonfast

import (
	"bytes"
	"slices"
	"unsafe"
)

// Out is JSON being encoded for a vectored write (writev(2)): a long
// string that needs no escaping is not copied into B but referred to, and
// written later from the memory it is in. A 64 KiB tool result thus goes
// from the request it was decoded from to the pipe without an encode
// buffer of its own.
type Out struct {
	// B is the encoding so far, without the strings referred to.
	B []byte
	// Refs are the strings referred to, in order: Refs[i].S goes at
	// offset Refs[i].At of B.
	Refs []Ref
	// RefMin is the length from which a plain string is referred to; 0
	// copies every string into B.
	RefMin int
	// Lent tells that a Ref is to memory its owner may change once
	// the encoding is out of its hands (RawRef): whoever keeps the
	// encoding beyond that copies it in first (Flatten).
	Lent bool
}

// Ref is a string of an [Out], written at offset At of its B.
type Ref struct {
	At int
	S  string
}

// Appender is implemented by message bodies that encode themselves
// faster than reflection-based marshalling can: AppendJSON appends the
// body's JSON to b, exactly what json v2 would write. The jsonrpc encoder
// uses it; the MCP types on the hot paths (tool calls and their results)
// implement it.
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// OutAppender is implemented by values that encode themselves into an
// [Out] (and may then refer to their long strings).
type OutAppender interface {
	AppendOut(o *Out) error
}

// Quote appends s as a quoted JSON string, referring to it when it is
// long enough and needs no escaping.
func (o *Out) Quote(s string) error {
	var err error
	if o.RefMin == 0 || len(s) < o.RefMin {
		o.B, err = AppendQuote(o.B, s)
		return err
	}
	o.B = append(o.B, '"')
	if !CleanString(unsafe.Slice(unsafe.StringData(s), len(s))) {
		o.B, err = appendEscaping(o.B, s) // not scanned for cleanness again
		return err
	}
	o.Refs = append(o.Refs, Ref{At: len(o.B), S: s})
	o.B = append(o.B, '"')
	return nil
}

// RawRef appends v, raw JSON in memory that its owner lends the encoding
// only while it is in the owner's hands (see Lent), referring to it
// when it is long enough. What an Out refers to holds no newline
// (Quote's strings are plain), so that a line-framed writer, which makes
// the newlines of B white space, need not look at it: v with a newline
// (white space between its tokens) is copied.
func (o *Out) RawRef(v []byte) {
	if o.RefMin == 0 || len(v) < o.RefMin || bytes.IndexByte(v, '\n') >= 0 {
		o.B = append(o.B, v...)
		return
	}
	o.Refs = append(o.Refs, Ref{At: len(o.B), S: unsafe.String(unsafe.SliceData(v), len(v))})
	o.Lent = true
}

// Flatten copies what o refers to into B, which then holds the whole
// encoding: in place when B has the room (a pooled Out's B grows to the
// messages it carries), each own piece moved right by the references
// before it, from the last on.
func (o *Out) Flatten() {
	if len(o.Refs) == 0 {
		return
	}
	own, n := len(o.B), o.Len()
	o.B = slices.Grow(o.B, n-own)[:n]
	end, shift := own, n-own
	for i := len(o.Refs) - 1; i >= 0; i-- {
		r := o.Refs[i]
		copy(o.B[r.At+shift:], o.B[r.At:end])
		shift -= len(r.S)
		copy(o.B[r.At+shift:], r.S)
		end = r.At
	}
	clear(o.Refs)
	o.Refs = o.Refs[:0]
	o.Lent = false
}

// Mark is a position in an [Out], to go back to with [Out.Rewind].
type Mark struct{ n, refs int }

// Mark returns the position o is at.
func (o *Out) Mark() Mark { return Mark{len(o.B), len(o.Refs)} }

// Rewind drops what was written after m.
func (o *Out) Rewind(m Mark) {
	o.B = o.B[:m.n]
	clear(o.Refs[m.refs:])
	o.Refs = o.Refs[:m.refs]
}

// Len is the length of the whole encoding.
func (o *Out) Len() int {
	n := len(o.B)
	for _, r := range o.Refs {
		n += len(r.S)
	}
	return n
}

// Reset empties o and drops its references, so that a pooled Out does
// not keep the memory they are in alive.
func (o *Out) Reset() {
	o.B = o.B[:0]
	clear(o.Refs)
	o.Refs = o.Refs[:0]
	o.Lent = false
}

// Buffers appends to dst the pieces of the encoding in order: parts of B
// and, between them, the strings referred to, which must not be modified.
func (o *Out) Buffers(dst [][]byte) [][]byte {
	at := 0
	for _, r := range o.Refs {
		dst = append(dst, o.B[at:r.At], unsafe.Slice(unsafe.StringData(r.S), len(r.S)))
		at = r.At
	}
	return append(dst, o.B[at:])
}
