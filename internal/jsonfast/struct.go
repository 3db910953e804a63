package jsonfast

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The struct codec handles the shape most tool arguments have: a struct
// of strings, numbers and booleans, with plain json tags. It produces and
// accepts exactly what json v2 does for such types (same member order,
// omitempty and omitzero as v2 defines them, case-sensitive names,
// unknown members ignored); any other type is left to json v2.

type kind uint8

const (
	kString kind = iota + 1
	kBool
	kInt
	kUint
	kFloat
)

type field struct {
	name      string
	prefix    []byte // `"name":`
	offset    uintptr
	kind      kind
	bits      int
	omitEmpty bool
	omitZero  bool
}

type plan struct {
	fields []field
	byName map[string]int
}

var plans sync.Map // reflect.Type -> *plan (nil when unsupported)

var (
	marshalerV1   = reflect.TypeFor[json.Marshaler]()
	marshalerV2   = reflect.TypeFor[json.MarshalerTo]()
	unmarshalerV1 = reflect.TypeFor[json.Unmarshaler]()
	unmarshalerV2 = reflect.TypeFor[json.UnmarshalerFrom]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarsh   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func hasMethods(t reflect.Type) bool {
	for _, x := range []reflect.Type{t, reflect.PointerTo(t)} {
		if x.Implements(marshalerV1) || x.Implements(marshalerV2) || x.Implements(unmarshalerV1) ||
			x.Implements(unmarshalerV2) || x.Implements(textMarshaler) || x.Implements(textUnmarsh) {
			return true
		}
	}
	return false
}

func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := makePlan(t)
	plans.Store(t, p)
	return p
}

func makePlan(t reflect.Type) *plan {
	if t.Kind() != reflect.Struct || hasMethods(t) {
		return nil
	}
	p := &plan{byName: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if sf.Anonymous {
			return nil // embedded fields are inlined by json v2
		}
		if !sf.IsExported() {
			if tagged {
				return nil // json v2 reports this; let it
			}
			continue
		}
		f := field{name: sf.Name, offset: sf.Offset}
		if tagged {
			name, opts, _ := strings.Cut(tag, ",")
			if strings.HasPrefix(name, "'") {
				return nil
			}
			if name != "" {
				f.name = name
			}
			for opt := range strings.SplitSeq(opts, ",") {
				switch opt {
				case "":
				case "omitempty":
					f.omitEmpty = true
				case "omitzero":
					f.omitZero = true
				default:
					return nil // string, format:…, case:…, inline, embed, unknown
				}
			}
		}
		ft := sf.Type
		if hasMethods(ft) {
			return nil
		}
		switch ft.Kind() {
		case reflect.String:
			f.kind = kString
		case reflect.Bool:
			f.kind = kBool
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.kind, f.bits = kInt, ft.Bits()
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.kind, f.bits = kUint, ft.Bits()
		case reflect.Float32, reflect.Float64:
			f.kind, f.bits = kFloat, ft.Bits()
		default:
			return nil
		}
		if _, dup := p.byName[f.name]; dup {
			return nil
		}
		f.prefix, _ = AppendQuote(nil, f.name)
		f.prefix = append(f.prefix, ':')
		p.byName[f.name] = len(p.fields)
		p.fields = append(p.fields, f)
	}
	if len(p.fields) == 0 {
		return nil
	}
	return p
}

// field returns the index of the field a member name (raw, as it stands
// between the quotes) decodes into.
func (p *plan) field(name []byte, escaped bool) (int, bool) {
	if escaped {
		i, found := p.byName[Name(name, true)]
		return i, found
	}
	i, found := p.byName[string(name)]
	return i, found
}

// structOf returns the plan and the address of the struct v holds or
// points to, or nil.
func structOf(v any) (*plan, unsafe.Pointer) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, nil
	}
	p := planFor(rv.Type().Elem())
	if p == nil {
		return nil, nil
	}
	return p, rv.UnsafePointer()
}

// AppendStruct appends the JSON of *v when v points to a struct the fast
// codec handles, and reports whether it did; otherwise b is returned
// unchanged and the caller uses json v2.
func AppendStruct(b []byte, v any) ([]byte, bool) {
	o := Out{B: b}
	ok := o.Struct(v)
	return o.B, ok
}

// Struct is [AppendStruct] into o, which may refer to long string fields.
// When it reports false, o is as it was.
func (o *Out) Struct(v any) bool {
	p, base := structOf(v)
	if p == nil {
		return false
	}
	start := o.Mark()
	o.B = append(o.B, '{')
	first := true
	for i := range p.fields {
		f := &p.fields[i]
		ptr := unsafe.Add(base, f.offset)
		if f.omitZero && isZero(f, ptr) || f.omitEmpty && f.kind == kString && *(*string)(ptr) == "" {
			continue
		}
		if !first {
			o.B = append(o.B, ',')
		}
		first = false
		o.B = append(o.B, f.prefix...)
		if !o.field(f, ptr) {
			o.Rewind(start)
			return false
		}
	}
	o.B = append(o.B, '}')
	return true
}

func isZero(f *field, ptr unsafe.Pointer) bool {
	switch f.kind {
	case kString:
		return *(*string)(ptr) == ""
	case kBool:
		return !*(*bool)(ptr)
	case kInt:
		return intAt(ptr, f.bits) == 0
	case kUint:
		return uintAt(ptr, f.bits) == 0
	default:
		return floatAt(ptr, f.bits) == 0
	}
}

func (o *Out) field(f *field, ptr unsafe.Pointer) bool {
	switch f.kind {
	case kString:
		return o.Quote(*(*string)(ptr)) == nil
	case kBool:
		o.B = strconv.AppendBool(o.B, *(*bool)(ptr))
	case kInt:
		o.B = strconv.AppendInt(o.B, intAt(ptr, f.bits), 10)
	case kUint:
		o.B = strconv.AppendUint(o.B, uintAt(ptr, f.bits), 10)
	default:
		x := floatAt(ptr, f.bits)
		if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
			return false // NaN and ±Inf: json v2 reports the error
		}
		o.B = jsontext.AppendFloat(o.B, x, f.bits)
	}
	return true
}

func intAt(p unsafe.Pointer, bits int) int64 {
	switch bits {
	case 8:
		return int64(*(*int8)(p))
	case 16:
		return int64(*(*int16)(p))
	case 32:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

func uintAt(p unsafe.Pointer, bits int) uint64 {
	switch bits {
	case 8:
		return uint64(*(*uint8)(p))
	case 16:
		return uint64(*(*uint16)(p))
	case 32:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

func floatAt(p unsafe.Pointer, bits int) float64 {
	if bits == 32 {
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}

// DecodeStruct decodes the JSON object data into *v when v points to a
// struct the fast codec handles and data holds nothing it cannot decode
// exactly as json v2 would; it reports whether it did. data must be valid
// JSON. When it reports false, *v may be partly written: the caller
// decodes again with json v2, which overwrites every member it sets.
func DecodeStruct(data []byte, v any) bool {
	p, base := structOf(v)
	if p == nil {
		return false
	}
	c := NewCursor(data)
	err := c.Object(func(name []byte, escaped bool) error {
		i, found := p.field(name, escaped)
		if !found {
			return c.Skip() // json v2 ignores unknown members
		}
		return decodeField(c, &p.fields[i], unsafe.Add(base, p.fields[i].offset))
	})
	return err == nil && c.Peek() == 0
}

func decodeField(c *Cursor, f *field, ptr unsafe.Pointer) error {
	if c.Peek() == 'n' {
		// json v2 sets these kinds to their zero value for null.
		if _, err := c.Literal(); err != nil {
			return err
		}
		setZero(f, ptr)
		return nil
	}
	if f.kind == kString {
		s, err := c.String()
		if err == nil {
			*(*string)(ptr) = s
		}
		return err
	}
	raw, err := c.Literal()
	if err != nil {
		return err
	}
	switch f.kind {
	case kBool:
		switch string(raw) {
		case "true":
			*(*bool)(ptr) = true
		case "false":
			*(*bool)(ptr) = false
		default:
			return ErrSyntax
		}
	case kInt:
		n, err := strconv.ParseInt(string(raw), 10, f.bits)
		if err != nil {
			return ErrSyntax
		}
		switch f.bits {
		case 8:
			*(*int8)(ptr) = int8(n)
		case 16:
			*(*int16)(ptr) = int16(n)
		case 32:
			*(*int32)(ptr) = int32(n)
		default:
			*(*int64)(ptr) = n
		}
	case kUint:
		n, err := strconv.ParseUint(string(raw), 10, f.bits)
		if err != nil {
			return ErrSyntax
		}
		switch f.bits {
		case 8:
			*(*uint8)(ptr) = uint8(n)
		case 16:
			*(*uint16)(ptr) = uint16(n)
		case 32:
			*(*uint32)(ptr) = uint32(n)
		default:
			*(*uint64)(ptr) = n
		}
	default:
		if raw[0] == 't' || raw[0] == 'f' {
			return ErrSyntax
		}
		x, err := strconv.ParseFloat(string(raw), f.bits)
		if err != nil {
			return ErrSyntax
		}
		if f.bits == 32 {
			*(*float32)(ptr) = float32(x)
		} else {
			*(*float64)(ptr) = x
		}
	}
	return nil
}

func setZero(f *field, ptr unsafe.Pointer) {
	switch f.kind {
	case kString:
		*(*string)(ptr) = ""
	case kBool:
		*(*bool)(ptr) = false
	default:
		size := uintptr(f.bits / 8)
		clear(unsafe.Slice((*byte)(ptr), size))
	}
}

// AppendMarshal appends v as json v2 marshals it: the way out of the fast
// encoders for the members they do not handle themselves.
func AppendMarshal(b []byte, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

// StringFields returns the JSON names of the fields of struct type t, in
// the order [DecodeStringFields] numbers them, when the fast codec handles
// t and every field is a string (at most 64 of them).
func StringFields(t reflect.Type) ([]string, bool) {
	p := planFor(t)
	if p == nil || len(p.fields) > 64 {
		return nil, false
	}
	names := make([]string, len(p.fields))
	for i, f := range p.fields {
		if f.kind != kString {
			return nil, false
		}
		names[i] = f.name
	}
	return names, true
}

// DecodeStringFields decodes data into *v, a struct whose fields are all
// strings (see [StringFields]), and reports whether data was exactly an
// object of those fields: every member one of them, every value a string
// (not null), and every field whose bit is set in required present. It
// thus checks, in the pass that decodes, what the JSON Schema of such an
// object asserts, so that a caller whose schema says nothing more need not
// validate separately. When it reports false, *v may be partly written.
// data must be valid JSON without duplicate member names.
func DecodeStringFields(data []byte, v any, required uint64) bool {
	p, base := structOf(v)
	if p == nil {
		return false
	}
	var seen uint64
	c := NewCursor(data)
	err := c.Object(func(name []byte, escaped bool) error {
		i, found := p.field(name, escaped)
		if !found || p.fields[i].kind != kString {
			return ErrSyntax
		}
		s, err := c.String() // not null: the schema says "string"
		if err != nil {
			return err
		}
		*(*string)(unsafe.Add(base, p.fields[i].offset)) = s
		seen |= 1 << i
		return nil
	})
	return err == nil && c.Peek() == 0 && seen&required == required
}
