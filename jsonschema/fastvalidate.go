package jsonschema

import (
	"bytes"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/ferrymcp/ferry/internal/jsonfast"
)

// maxDepth bounds the nesting of instances, as encoding/json does.
const maxDepth = 10000

// state is the scratch space of one fast validation. States are pooled, so
// a validation that finds no problem allocates nothing.
type state struct {
	data     []byte
	trusted  bool // data was validated strictly before
	problems []Problem
	more     bool // problems were dropped
	path     []pathSeg
	digits   []byte   // decimal digits of the current number
	buf      []byte   // decoded strings and canonical forms
	names    [][]byte // names of undeclared members of the open objects
	seen     []bool   // members seen, for objects with more than 64 properties
	depth    int
}

var statePool = sync.Pool{New: func() any {
	return &state{path: make([]pathSeg, 0, 16), digits: make([]byte, 0, 32), buf: make([]byte, 0, 256)}
}}

// validateFast checks data against root.
func validateFast(root *node, data []byte) error { return validateFastMode(root, data, false) }

func validateFastMode(root *node, data []byte, trusted bool) error {
	st := statePool.Get().(*state)
	st.data = data
	st.trusted = trusted
	i := jsonfast.SkipSpace(data, 0)
	var err *jsonfast.SyntaxError
	if i == len(data) {
		err = &jsonfast.SyntaxError{Offset: i, What: "no value"}
	} else {
		i, err = st.value(root, i)
		if err == nil {
			if i = jsonfast.SkipSpace(data, i); i != len(data) {
				err = &jsonfast.SyntaxError{Offset: i, What: "unexpected data after the value"}
			}
		}
	}
	var verr error
	switch {
	case err != nil:
		verr = &ValidationError{Problems: []Problem{{Keyword: "", Message: "arguments are not valid JSON: " + err.Error()}}}
	case len(st.problems) > 0:
		probs := st.problems
		if st.more {
			probs = append(probs, Problem{Message: "(more problems not shown)"})
		}
		verr = &ValidationError{Problems: probs}
		st.problems = nil
	}
	st.reset()
	statePool.Put(st)
	return verr
}

func (st *state) reset() {
	st.data = nil
	st.problems = st.problems[:0]
	st.more = false
	clear(st.path[:cap(st.path)])
	st.path = st.path[:0]
	clear(st.names)
	st.names = st.names[:0]
	st.depth = 0
	if cap(st.buf) > 64<<10 {
		st.buf = make([]byte, 0, 256)
	}
}

func (st *state) add(p Problem) {
	if len(st.problems) >= MaxProblems {
		st.more = true
		return
	}
	st.problems = append(st.problems, p)
}

// fail records a problem about the value at the current path.
func (st *state) fail(keyword, detail string) {
	if len(st.problems) >= MaxProblems {
		st.more = true
		return
	}
	st.add(newProblem(st.path, keyword, detail))
}

// value checks the value at data[i] (no leading space) against n and
// returns the offset past it. n may be nil: then only the syntax is
// checked.
func (st *state) value(n *node, i int) (int, *jsonfast.SyntaxError) {
	for n != nil && n.refOnly {
		n = n.ref
	}
	data := st.data
	if i >= len(data) {
		return i, jsonfast.Unexpected(data, i)
	}
	start := i
	c := data[i]
	var end int
	var err *jsonfast.SyntaxError
	switch {
	case c == '{':
		end, err = st.object(n, i)
	case c == '[':
		end, err = st.array(n, i)
	case c == '"':
		end, err = st.str(n, i)
	case c == '-' || (c >= '0' && c <= '9'):
		end, err = st.number(n, i)
	case c == 't':
		end, err = jsonfast.ScanLiteral(data, i, "true")
		if err == nil && n != nil {
			st.checkType(n, tBoolean, start, end)
		}
	case c == 'f':
		end, err = jsonfast.ScanLiteral(data, i, "false")
		if err == nil && n != nil {
			st.checkType(n, tBoolean, start, end)
		}
	case c == 'n':
		end, err = jsonfast.ScanLiteral(data, i, "null")
		if err == nil && n != nil {
			st.checkType(n, tNull, start, end)
		}
	default:
		return i, jsonfast.Unexpected(data, i)
	}
	if err != nil || n == nil {
		return end, err
	}
	if n.hasEnum {
		st.checkEnum(n, start, end)
	}
	if n.orNull != nil && c != 'n' {
		if _, err := st.value(n.orNull, start); err != nil {
			return end, err
		}
	}
	if n.ref != nil {
		// Check the value again against the target of $ref; it is valid
		// JSON now.
		if _, err := st.value(n.ref, start); err != nil {
			return end, err
		}
	}
	return end, nil
}

// checkType records a problem unless n allows values of type t (one bit).
// It reports whether the type is allowed.
func (st *state) checkType(n *node, t uint8, start, end int) bool {
	if n.never {
		st.failNever()
		return false
	}
	if n.types == 0 || n.types&t != 0 {
		return true
	}
	if t == tNumber && n.types&tInteger != 0 {
		if _, ok := plainInt(st.data[start:end]); ok {
			return true
		}
		d, digits := parseDecimal(st.data[start:end], st.digits)
		st.digits = digits
		if d.isInteger() {
			return true
		}
	}
	st.fail("type", "must be of type "+typeNames(n.typeNames)+", got "+describeValue(st.data[start:end]))
	return false
}

func (st *state) failNever() {
	if len(st.path) > 0 && !st.path[len(st.path)-1].isIndex {
		st.fail("false", "is not allowed")
		return
	}
	st.fail("false", "no value is allowed here")
}

func (st *state) checkEnum(n *node, start, end int) {
	data := st.data
	var canon []byte
	if data[start] == '"' {
		// A string without escapes is its own canonical form.
		if bytes.IndexByte(data[start+1:end-1], '\\') < 0 {
			canon = data[start:end]
		}
	}
	if canon == nil {
		st.buf, _ = appendCanonical(st.buf[:0], data, start)
		canon = st.buf
	}
	if n.enumSet != nil {
		if _, ok := n.enumSet[string(canon)]; ok {
			return
		}
	} else {
		for _, e := range n.enum {
			if bytes.Equal(e, canon) {
				return
			}
		}
	}
	if n.isConst {
		st.fail("const", "must be "+showValue(n.enumRaw[0])+", got "+describeValue(data[start:end]))
		return
	}
	st.fail("enum", "must be one of "+listValues(n.enumRaw)+", got "+describeValue(data[start:end]))
}

func (st *state) str(n *node, i int) (int, *jsonfast.SyntaxError) {
	if st.trusted {
		return st.trustedStr(n, i)
	}
	end, escaped, runes, err := jsonfast.ScanString(st.data, i, jsonfast.CountRunes)
	if err != nil || n == nil {
		return end, err
	}
	return st.checkString(n, i, end, escaped, runes)
}

// trustedStr is str for an instance already validated strictly: the end
// of the string is all it looks for, and characters are counted only when
// the schema bounds the length.
func (st *state) trustedStr(n *node, i int) (int, *jsonfast.SyntaxError) {
	end, escaped, ok := jsonfast.TrustedStringEnd(st.data, i)
	if !ok || (escaped && n != nil && (n.minLength >= 0 || n.maxLength >= 0)) {
		end, escaped, runes, err := jsonfast.ScanString(st.data, i, jsonfast.CountRunes)
		if err != nil || n == nil {
			return end, err
		}
		return st.checkString(n, i, end, escaped, runes)
	}
	if n == nil {
		return end, nil
	}
	runes := 0
	if n.minLength >= 0 || n.maxLength >= 0 {
		runes = utf8.RuneCount(st.data[i+1 : end-1])
	}
	return st.checkString(n, i, end, escaped, runes)
}

func (st *state) checkString(n *node, i, end int, escaped bool, runes int) (int, *jsonfast.SyntaxError) {
	if !st.checkType(n, tString, i, end) {
		return end, nil
	}
	if n.minLength >= 0 && runes < n.minLength {
		st.fail("minLength", "must be at least "+plural(n.minLength, "character", "characters")+" long, got "+
			describeValue(st.data[i:end])+" ("+plural(runes, "character", "characters")+")")
	}
	if n.maxLength >= 0 && runes > n.maxLength {
		st.fail("maxLength", "must be at most "+plural(n.maxLength, "character", "characters")+" long, got "+
			plural(runes, "character", "characters")+": "+describeValue(st.data[i:end]))
	}
	if n.pattern != nil {
		var s []byte
		if escaped {
			st.buf = jsonfast.AppendUnescaped(st.buf[:0], st.data[i:end])
			s = st.buf
		} else {
			s = st.data[i+1 : end-1]
		}
		if !n.pattern.MatchString(unsafe.String(unsafe.SliceData(s), len(s))) {
			st.fail("pattern", "must match the regular expression "+strconv.Quote(n.pattern.String())+
				", got "+describeValue(st.data[i:end]))
		}
	}
	return end, nil
}

func (st *state) number(n *node, i int) (int, *jsonfast.SyntaxError) {
	end, err := jsonfast.ScanNumber(st.data, i)
	if err != nil {
		return end, err
	}
	if !exponentInRange(st.data[i:end]) {
		st.fail("", "the number "+shorten(string(st.data[i:end]))+" is out of range (exponents are limited to ±"+
			strconv.Itoa(maxNumberExp)+")")
		return end, nil
	}
	if n == nil {
		return end, nil
	}
	if !st.checkType(n, tNumber, i, end) || !n.hasNumeric {
		return end, nil
	}
	if n.intBounds {
		if v, ok := plainInt(st.data[i:end]); ok {
			if (n.minimum == nil || v >= n.minInt) && (n.maximum == nil || v <= n.maxInt) &&
				(n.exclMinimum == nil || v > n.exclMinInt) && (n.exclMaximum == nil || v < n.exclMaxInt) &&
				(n.multipleOf == nil || v%n.mulInt == 0) {
				return end, nil
			}
		}
	}
	d, digits := parseDecimal(st.data[i:end], st.digits)
	st.digits = digits
	got := func() string { return ", got " + string(st.data[i:end]) }
	if n.minimum != nil && d.cmp(*n.minimum) < 0 {
		st.fail("minimum", "must be >= "+n.minimum.String()+got())
	}
	if n.exclMinimum != nil && d.cmp(*n.exclMinimum) <= 0 {
		st.fail("exclusiveMinimum", "must be > "+n.exclMinimum.String()+got())
	}
	if n.maximum != nil && d.cmp(*n.maximum) > 0 {
		st.fail("maximum", "must be <= "+n.maximum.String()+got())
	}
	if n.exclMaximum != nil && d.cmp(*n.exclMaximum) >= 0 {
		st.fail("exclusiveMaximum", "must be < "+n.exclMaximum.String()+got())
	}
	if n.multipleOf != nil && !d.isMultipleOf(*n.multipleOf) {
		st.fail("multipleOf", "must be a multiple of "+n.multipleOf.String()+got())
	}
	return end, nil
}

func (st *state) enter(i int) *jsonfast.SyntaxError {
	st.depth++
	if st.depth > maxDepth {
		return &jsonfast.SyntaxError{Offset: i, What: "nested too deeply"}
	}
	return nil
}

func (st *state) array(n *node, i int) (int, *jsonfast.SyntaxError) {
	start := i
	if err := st.enter(i); err != nil {
		return i, err
	}
	defer func() { st.depth-- }()
	if n != nil && !st.checkTypeLazy(n, tArray, i) {
		n = nil
	}
	data := st.data
	i = jsonfast.SkipSpace(data, i+1)
	count := 0
	if i < len(data) && data[i] == ']' {
		i++
	} else {
		for {
			var child *node
			if n != nil {
				if count < len(n.prefixItems) {
					child = n.prefixItems[count]
				} else {
					child = n.items
				}
			}
			st.path = append(st.path, pathSeg{index: count, isIndex: true})
			var err *jsonfast.SyntaxError
			i, err = st.value(child, i)
			st.path = st.path[:len(st.path)-1]
			if err != nil {
				return i, err
			}
			count++
			i = jsonfast.SkipSpace(data, i)
			if i >= len(data) {
				return i, &jsonfast.SyntaxError{Offset: i, What: "unexpected end of input in array"}
			}
			if data[i] == ']' {
				i++
				break
			}
			if data[i] != ',' {
				return i, &jsonfast.SyntaxError{Offset: i, What: "expected ',' or ']' in array"}
			}
			i = jsonfast.SkipSpace(data, i+1)
		}
	}
	if n == nil {
		return i, nil
	}
	if n.minItems >= 0 && count < n.minItems {
		st.fail("minItems", "must have at least "+plural(n.minItems, "item", "items")+", got "+strconv.Itoa(count))
	}
	if n.maxItems >= 0 && count > n.maxItems {
		st.fail("maxItems", "must have at most "+plural(n.maxItems, "item", "items")+", got "+strconv.Itoa(count))
	}
	if n.uniqueItems && count > 1 {
		st.checkUnique(start)
	}
	return i, nil
}

// checkUnique checks that the items of the valid array at data[start] are
// distinct.
func (st *state) checkUnique(start int) {
	data := st.data
	seen := map[string]int{}
	i := jsonfast.SkipSpace(data, start+1)
	for k := 0; data[i] != ']'; k++ {
		var canon []byte
		itemStart := i
		canon, i = appendCanonical(nil, data, i)
		if j, ok := seen[string(canon)]; ok {
			st.fail("uniqueItems", "must not contain duplicate items, but items "+strconv.Itoa(j)+" and "+
				strconv.Itoa(k)+" are both "+showValue(data[itemStart:i]))
			return
		}
		seen[string(canon)] = k
		i = jsonfast.SkipSpace(data, i)
		if data[i] == ',' {
			i = jsonfast.SkipSpace(data, i+1)
		}
	}
}

func (st *state) object(n *node, i int) (int, *jsonfast.SyntaxError) {
	start := i
	if err := st.enter(i); err != nil {
		return i, err
	}
	defer func() { st.depth-- }()
	typeOK := n == nil || st.checkTypeLazy(n, tObject, start)
	if !typeOK || (n != nil && !n.hasObjectChecks) {
		n = nil
	}
	data := st.data
	i = jsonfast.SkipSpace(data, i+1)
	count := 0
	// Members seen: a bit per property, or st.seen for many properties.
	var seenBits uint64
	var seenBase int
	many := n != nil && len(n.props) > 64
	if many {
		seenBase = len(st.seen)
		for range n.props {
			st.seen = append(st.seen, false)
		}
		defer func() { st.seen = st.seen[:seenBase] }()
	}
	namesBase := len(st.names)
	defer func() {
		clear(st.names[namesBase:])
		st.names = st.names[:namesBase]
	}()
	var nameSet map[string]struct{}

	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return i, &jsonfast.SyntaxError{Offset: i, What: "expected a member name"}
			}
			nameStart := i
			nameEnd, escaped, _, err := jsonfast.ScanString(data, i, jsonfast.CountRunes)
			if err != nil {
				return nameEnd, err
			}
			var name []byte
			if escaped {
				name = jsonfast.AppendUnescaped(nil, data[i:nameEnd])
			} else {
				name = data[i+1 : nameEnd-1]
			}
			i = jsonfast.SkipSpace(data, nameEnd)
			if i >= len(data) || data[i] != ':' {
				return i, &jsonfast.SyntaxError{Offset: i, What: "expected ':' after a member name"}
			}
			i = jsonfast.SkipSpace(data, i+1)

			// Find the member's schema and check for duplicates.
			idx := -1
			if n != nil {
				idx = n.lookup(name)
			}
			var child *node
			dup := false
			if idx >= 0 {
				if many {
					dup = st.seen[seenBase+idx]
					st.seen[seenBase+idx] = true
				} else {
					dup = seenBits&(1<<idx) != 0
					seenBits |= 1 << idx
				}
				if n.props[idx].declared {
					child = n.props[idx].node
				} else {
					child = n.additional
				}
			} else {
				if n != nil {
					child = n.additional
				}
				if nameSet != nil {
					_, dup = nameSet[string(name)]
					nameSet[string(name)] = struct{}{}
				} else {
					for _, prev := range st.names[namesBase:] {
						if bytes.Equal(prev, name) {
							dup = true
							break
						}
					}
					st.names = append(st.names, name)
					if len(st.names)-namesBase > 32 {
						nameSet = make(map[string]struct{}, 64)
						for _, prev := range st.names[namesBase:] {
							nameSet[string(prev)] = struct{}{}
						}
					}
				}
			}
			if dup {
				return i, &jsonfast.SyntaxError{Offset: nameStart, What: "duplicate member name " + strconv.Quote(string(name))}
			}
			if child != nil && child.never && (idx < 0 || !n.props[idx].declared) {
				st.add(unknownProblem(st.path, string(name), n.allowed))
				child = nil
			}
			st.path = append(st.path, pathSeg{name: unsafe.String(unsafe.SliceData(name), len(name))})
			i, err = st.value(child, i)
			st.path = st.path[:len(st.path)-1]
			if err != nil {
				return i, err
			}
			count++
			i = jsonfast.SkipSpace(data, i)
			if i >= len(data) {
				return i, &jsonfast.SyntaxError{Offset: i, What: "unexpected end of input in object"}
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return i, &jsonfast.SyntaxError{Offset: i, What: "expected ',' or '}' in object"}
			}
			i = jsonfast.SkipSpace(data, i+1)
		}
	}
	if n == nil {
		return i, nil
	}
	if n.nRequired > 0 {
		for k := range n.props {
			p := &n.props[k]
			if !p.required {
				continue
			}
			var seen bool
			if many {
				seen = st.seen[seenBase+k]
			} else {
				seen = seenBits&(1<<k) != 0
			}
			if !seen {
				st.add(missingProblem(st.path, p.name))
			}
		}
	}
	if n.minProps >= 0 && count < n.minProps {
		st.fail("minProperties", "must have at least "+plural(n.minProps, "member", "members")+", got "+strconv.Itoa(count))
	}
	if n.maxProps >= 0 && count > n.maxProps {
		st.fail("maxProperties", "must have at most "+plural(n.maxProps, "member", "members")+", got "+strconv.Itoa(count))
	}
	return i, nil
}

// checkTypeLazy is checkType for objects and arrays, whose end is only
// known after walking them: the message is built from a separate skip.
func (st *state) checkTypeLazy(n *node, t uint8, start int) bool {
	if !n.never && (n.types == 0 || n.types&t != 0) {
		return true
	}
	end := st.skip(start)
	return st.checkType(n, t, start, end)
}

// skip returns the end of the value at data[i], or len(data) when it is
// malformed (the walk that follows reports the error).
func (st *state) skip(i int) int {
	sub := state{data: st.data}
	end, err := sub.value(nil, i)
	if err != nil {
		return len(st.data)
	}
	return end
}

func (n *node) lookup(name []byte) int {
	if n.propIndex != nil {
		if i, ok := n.propIndex[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range n.props {
		if n.props[i].name == string(name) {
			return i
		}
	}
	return -1
}
