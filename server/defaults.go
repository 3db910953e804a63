package server

import (
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// inputDefaults returns the value a typed tool's input starts from before
// its arguments are decoded into it: the zero In, with the default of
// every top-level property of schema that has one (default=V in a
// jsonschema tag) set in its field. Arguments present in the call then
// overwrite them; an omitted one leaves its default.
//
// Only defaults that share no memory are applied (booleans, numbers,
// strings, and arrays and structs of them): the value is copied for every
// call, and a slice, map or pointer would be shared by all. Other
// defaults stay annotations in the schema, as they are for a raw
// [ToolHandler].
func inputDefaults[In any](schema jsontext.Value) In {
	var base In
	if t := reflect.TypeFor[In](); t.Kind() != reflect.Struct {
		return base
	}
	var root struct {
		Properties map[string]struct {
			Default jsontext.Value `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &root) != nil {
		return base
	}
	for name, p := range root.Properties {
		if len(p.Default) == 0 {
			continue
		}
		member, err := json.Marshal(map[string]jsontext.Value{name: p.Default})
		if err != nil {
			continue
		}
		var one In
		if json.Unmarshal(member, &one) != nil || holdsMemory(reflect.ValueOf(&one).Elem()) {
			continue
		}
		json.Unmarshal(member, &base)
	}
	return base
}

// holdsMemory reports whether v refers to memory that a copy of v would
// share: a non-nil pointer, slice, map, channel, function or interface.
func holdsMemory(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return !v.IsNil()
	case reflect.Struct:
		for i := range v.NumField() {
			if holdsMemory(v.Field(i)) {
				return true
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if holdsMemory(v.Index(i)) {
				return true
			}
		}
	}
	return false
}
