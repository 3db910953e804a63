package server

import (
	"encoding/base64"
	"slices"
	"sort"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// registry holds named items and lists them in a deterministic order
// (sorted by key), so that clients can cache lists ("Servers SHOULD return
// tools from tools/list in a deterministic order").
type registry[T any] struct {
	items  map[string]T
	sorted []string // nil when it must be rebuilt
}

func (r *registry[T]) len() int { return len(r.items) }

func (r *registry[T]) get(key string) (T, bool) {
	v, ok := r.items[key]
	return v, ok
}

// put adds or replaces an item.
func (r *registry[T]) put(key string, v T) {
	if r.items == nil {
		r.items = make(map[string]T)
	}
	if _, exists := r.items[key]; !exists {
		r.sorted = nil
	}
	r.items[key] = v
}

func (r *registry[T]) remove(keys ...string) bool {
	removed := false
	for _, k := range keys {
		if _, ok := r.items[k]; ok {
			delete(r.items, k)
			removed = true
		}
	}
	if removed {
		r.sorted = nil
	}
	return removed
}

func (r *registry[T]) keys() []string {
	if r.sorted == nil {
		r.sorted = make([]string, 0, len(r.items))
		for k := range r.items {
			r.sorted = append(r.sorted, k)
		}
		sort.Strings(r.sorted)
	}
	return r.sorted
}

// all returns every item in order.
func (r *registry[T]) all() []T {
	keys := r.keys()
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = r.items[k]
	}
	return out
}

// page returns up to size items after the cursor, and the cursor of the
// next page ("" at the end). The cursor is the last key returned, so a
// page stays valid when items are added or removed meanwhile.
func (r *registry[T]) page(cursor string, size int) ([]T, string, error) {
	keys := r.keys()
	start := 0
	if cursor != "" {
		last, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q", cursor)
		}
		start, _ = slices.BinarySearch(keys, string(last))
		if start < len(keys) && keys[start] == string(last) {
			start++
		}
	}
	end := min(start+size, len(keys))
	out := make([]T, 0, end-start)
	for _, k := range keys[start:end] {
		out = append(out, r.items[k])
	}
	next := ""
	if end < len(keys) {
		next = base64.RawURLEncoding.EncodeToString([]byte(keys[end-1]))
	}
	return out, next, nil
}
