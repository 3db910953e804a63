package gateway

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// passResult makes an upstream's tools/call result the client's of req
// without decoding it (see passOn).
func (f *front) passResult(req *server.Request, raw jsontext.Value) (out jsontext.Value, isError, ok bool) {
	var stamp []byte
	if req.Stateless() {
		stamp = f.g.stamp
	}
	dropStructured := !req.Stateless() && !protocol.AtLeast(req.ProtocolVersion, protocol.Version20250618)
	return passOn(raw, stamp, dropStructured)
}

// passOn does for an undecoded result what [result] does for a decoded
// one: what the upstream's era put there (resultType, and its serverInfo
// in _meta) is dropped, so is structuredContent when dropStructured (a
// legacy client before 2025-06-18), and stamp, for a stateless client,
// puts the gateway's resultType and serverInfo first (as the endpoint's
// server does to the results it decodes itself). A result that needs none
// of this goes on as it came, uncopied; else the members it keeps are
// copied once, still undecoded. ok is false for a result it will not
// splice (not an object, or a member name with escapes): the caller
// decodes that one. isError reports the result's isError, seen on the
// way (the Result callTool returns says so to middleware).
func passOn(raw jsontext.Value, stamp []byte, dropStructured bool) (out jsontext.Value, isError, ok bool) {
	stateless := stamp != nil
	var keep, meta [8]memberSpan // on the stack for the usual few members
	kept, metas := keep[:0], meta[:0]
	changed := false
	droppedAfterKept := false // whether the members kept are apart
	drop := func() {
		changed = true
		droppedAfterKept = droppedAfterKept || len(kept) > 0
	}
	end, ok := members(raw, func(name []byte, m memberSpan) bool {
		switch string(name) {
		case "resultType":
			drop()
		case "structuredContent":
			if dropStructured {
				drop()
			} else {
				kept = append(kept, m)
			}
		case "_meta":
			var mok bool
			metas, mok = metaMembers(raw[m.value:m.end], m.value, metas)
			drop()
			return mok
		case "isError":
			isError = string(raw[m.value:m.end]) == "true"
			kept = append(kept, m)
		default:
			kept = append(kept, m)
		}
		return true
	})
	if !ok {
		return nil, false, false
	}
	if !changed && !stateless {
		return raw, isError, true
	}
	if !stateless && len(metas) == 0 && len(kept) > 0 && !droppedAfterKept {
		// The members kept are the object's last ones, after those
		// dropped: the result is the end of raw, from the comma (or
		// space) before the first kept, made the opening brace. raw is
		// the caller's to change (CallToolRaw), and nothing is copied.
		p := kept[0].start - 1
		raw[p] = '{'
		return raw[p:end], isError, true
	}
	size := len(raw) + 2
	if stateless {
		size += len(stamp)
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	if stateless {
		b = append(b, stamp...) // "resultType":"complete","_meta":{"…/serverInfo":…
	} else if len(metas) > 0 {
		b = append(b, `"_meta":{`...)
	}
	if stateless || len(metas) > 0 {
		for i, m := range metas {
			if i > 0 || stateless {
				b = append(b, ',')
			}
			b = append(b, raw[m.start:m.end]...)
		}
		b = append(b, '}')
		if len(kept) > 0 {
			b = append(b, ',')
		}
	}
	for i, m := range kept {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, raw[m.start:m.end]...)
	}
	return append(b, '}'), isError, true
}

// stampOf is the start of a stateless result the gateway passes on: its
// resultType, and the opening of its _meta with the gateway's identity
// (see passResult).
func stampOf(impl protocol.Implementation) []byte {
	info, err := json.Marshal(&impl)
	if err != nil {
		panic(err) // an Implementation always encodes
	}
	b := []byte(`"resultType":"` + protocol.ResultComplete + `","_meta":{"` + protocol.MetaServerInfo + `":`)
	return append(b, info...)
}

// metaMembers appends to out the members of the _meta object obj (at
// offset base in the result) other than the upstream's serverInfo.
func metaMembers(obj []byte, base int, out []memberSpan) ([]memberSpan, bool) {
	_, ok := members(obj, func(name []byte, m memberSpan) bool {
		if string(name) != protocol.MetaServerInfo {
			out = append(out, memberSpan{m.start + base, m.value + base, m.end + base})
		}
		return true
	})
	return out, ok
}

// memberSpan is where one member of an object is: its name from start, its
// value from value, up to end.
type memberSpan struct{ start, value, end int }

// members calls f with each member of the JSON object obj, which the
// engine validated when it arrived, and reports whether obj is an object
// whose member names have no escapes (so that they can be compared as
// they are) and f returned true for each; end is the offset past the
// object's closing brace.
func members(obj []byte, f func(name []byte, m memberSpan) bool) (end int, ok bool) {
	i := jsonfast.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0, false
	}
	i = jsonfast.SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return i + 1, true
	}
	for i < len(obj) && obj[i] == '"' {
		nameEnd := jsonfast.SkipValue(obj, i)
		if nameEnd < 0 {
			return 0, false
		}
		name := obj[i+1 : nameEnd-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return 0, false
		}
		j := jsonfast.SkipSpace(obj, nameEnd)
		if j >= len(obj) || obj[j] != ':' {
			return 0, false
		}
		v := jsonfast.SkipSpace(obj, j+1)
		vend := jsonfast.SkipValue(obj, v)
		if vend < 0 || !f(name, memberSpan{i, v, vend}) {
			return 0, false
		}
		k := jsonfast.SkipSpace(obj, vend)
		if k >= len(obj) {
			return 0, false
		}
		switch obj[k] {
		case '}':
			return k + 1, true
		case ',':
			i = jsonfast.SkipSpace(obj, k+1)
		default:
			return 0, false
		}
	}
	return 0, false
}
