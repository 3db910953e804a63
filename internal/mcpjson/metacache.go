package mcpjson

import (
	"bytes"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// A MetaCache decodes result _meta objects, remembering the last one.
// A stateless server identifies itself in every result's _meta ("servers
// SHOULD identify themselves in each result's _meta"), so a client sees
// the same bytes on result after result: those are decoded once, and each
// later result gets its own copy of the maps and slices (the scalars in
// them are immutable and shared). The zero value is ready to use, and a
// MetaCache is safe for concurrent use.
type MetaCache struct {
	last atomic.Pointer[metaEntry]
}

type metaEntry struct {
	raw  []byte
	meta protocol.Meta
}

// maxCachedMeta bounds the _meta objects worth remembering.
const maxCachedMeta = 1 << 10

// Decode decodes raw, a JSON object.
func (c *MetaCache) Decode(raw jsontext.Value) (protocol.Meta, error) {
	if e := c.last.Load(); e != nil && bytes.Equal(e.raw, raw) {
		return cloneJSON(e.meta).(protocol.Meta), nil
	}
	var m protocol.Meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if len(raw) <= maxCachedMeta {
		c.last.Store(&metaEntry{raw: bytes.Clone(raw), meta: cloneJSON(m).(protocol.Meta)})
	}
	return m, nil
}

// cloneJSON copies the objects and arrays of a decoded JSON value.
func cloneJSON(v any) any {
	switch v := v.(type) {
	case protocol.Meta:
		if v == nil {
			return v
		}
		out := make(protocol.Meta, len(v))
		for k, e := range v {
			out[k] = cloneJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = cloneJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneJSON(e)
		}
		return out
	}
	return v
}
