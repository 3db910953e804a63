package protocol

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The schema tests hold the Go types to the specification's JSON Schema of
// every revision (testdata/spec/<revision>/schema.json, copied from the
// specification repository; see testdata/spec/README.md):
//
//   - TestSchemaDefinitionsMapped: every definition has a Go counterpart
//     (schema_table_test.go), and every property of an object definition
//     is a JSON member of that counterpart; conversely every JSON member of
//     a counterpart is a property of some definition of some revision.
//   - TestSchemaSamples: Go values of every kind of message
//     (schema_samples_test.go), marshalled with json v2 and framed by
//     package jsonrpc, validate against their revision's definitions, both
//     as published and closed (see [closeSchema]: no member the revision
//     does not declare, so legacy samples carry no stateless-only field), and
//     decode back to the same JSON and an equal Go value.
//   - TestSpecExamples (schema_examples_test.go): the JSON examples of the
//     specification pages agree with the schema (except [knownSpecIssues])
//     and decode into the Go types without losing anything.

// TestSchemaDefinitionsMapped checks that every definition of every
// revision has a Go counterpart in [counterparts] and that the properties
// of object definitions are JSON members of the Go types.
func TestSchemaDefinitionsMapped(t *testing.T) {
	schemas := loadSchemas(t)
	m := newMapChecker()
	for _, rev := range allRevisions {
		s := schemas[rev]
		var missing []string
		mapped := 0
		for _, name := range s.defNames() {
			cp, ok := counterparts[name]
			if !ok {
				missing = append(missing, name)
				continue
			}
			mapped++
			m.checkDef(s, name, cp)
		}
		if len(missing) > 0 {
			t.Errorf("%s: %d definitions have no Go counterpart in the counterparts table: %s", rev, len(missing), strings.Join(missing, ", "))
		}
		t.Logf("%s: %d of %d definitions mapped", rev, mapped, len(s.defs))
	}
	for _, p := range m.problems {
		t.Error(p)
	}

	// Table entries no revision defines are stale.
	for _, name := range sortedKeys(counterparts) {
		found := false
		for _, rev := range allRevisions {
			if schemas[rev].def(name) != nil {
				found = true
			}
		}
		if !found {
			t.Errorf("counterparts[%q]: no revision defines it", name)
		}
		if cp := counterparts[name]; cp.kind == cpStructural && cp.why == "" {
			t.Errorf("counterparts[%q]: a structural counterpart needs a reason", name)
		}
	}

	// Every JSON member of a Go counterpart is a property of some
	// definition of some revision: a member no revision knows is a typo or
	// an invention.
	for _, typ := range m.sortedTypes() {
		for _, f := range sortedKeys(jsonFields(typ)) {
			if !m.covered[typ][f] && goOnlyMembers[typ.Name()+"."+f] == "" {
				t.Errorf("%s: JSON member %q is a property of no definition of any revision", typ, f)
			}
		}
	}

	for _, key := range sortedKeys(goOnlyMembers) {
		typ, f, _ := strings.Cut(key, ".")
		for covered, members := range m.covered {
			if covered.Name() == typ && members[f] {
				t.Errorf("goOnlyMembers[%q]: a definition declares it; drop the entry", key)
			}
		}
	}

	// Every exported struct type of the package is reached from a
	// definition (directly, embedded or as a member), or says why not.
	reached := make(map[string]bool)
	for typ := range m.reached {
		if typ.PkgPath() == reflect.TypeFor[Tool]().PkgPath() {
			reached[typ.Name()] = true
		}
	}
	for _, name := range exportedStructs(t) {
		if !reached[name] && goOnlyTypes[name] == "" {
			t.Errorf("type %s is the counterpart of no schema definition: map it, or list it in goOnlyTypes with a reason", name)
		}
		if reached[name] && goOnlyTypes[name] != "" {
			t.Errorf("goOnlyTypes[%q]: the type is reached from a definition; drop the entry", name)
		}
	}
}

// mapChecker walks definitions against their Go counterparts.
type mapChecker struct {
	problems []string
	covered  map[reflect.Type]map[string]bool // JSON members matched by some property
	reached  map[reflect.Type]bool
	seen     map[string]bool // problems already reported
}

func newMapChecker() *mapChecker {
	return &mapChecker{covered: map[reflect.Type]map[string]bool{}, reached: map[reflect.Type]bool{}, seen: map[string]bool{}}
}

func (m *mapChecker) problem(format string, args ...any) {
	p := fmt.Sprintf(format, args...)
	if !m.seen[p] {
		m.seen[p] = true
		m.problems = append(m.problems, p)
	}
}

func (m *mapChecker) sortedTypes() []reflect.Type {
	var out []reflect.Type
	for t := range m.covered {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (m *mapChecker) checkDef(s *specSchema, name string, cp counterpart) {
	def := s.def(name)
	where := s.rev + " " + name
	props := s.propsOf(def)
	switch cp.kind {
	case cpDirect:
		for _, typ := range cp.types {
			m.checkObject(s, where, def, typ)
		}
	case cpRequest, cpNotification:
		m.checkWire(where, props)
		if c := constOf(props["method"]); cp.method != "" && c != cp.method {
			m.problem("%s: method is %q in the schema, %q in the table", where, c, cp.method)
		}
		if _, ok := props["id"]; ok && cp.kind == cpNotification {
			m.problem("%s: a notification with an id", where)
		}
		if p := props["params"]; p != nil {
			m.checkObject(s, where+".params", p, cp.types[0])
		}
	case cpResponse:
		m.checkWire(where, props)
		for _, ref := range refTargets(props["result"]) {
			rc, ok := counterparts[ref]
			if !ok || rc.kind != cpDirect || !overlaps(rc.types, cp.types) {
				m.problem("%s: result %s is not carried by %v", where, ref, cp.types)
			}
		}
	case cpErrorEnvelope:
		m.checkWire(where, props)
		errSchemas := s.memberSchemas(props["error"], "")
		code, data := s.errorParts(errSchemas)
		if code != cp.code {
			m.problem("%s: code %d in the schema, %d in the table", where, code, cp.code)
		}
		switch {
		case len(cp.types) == 0 && data != nil:
			m.problem("%s: error.data is declared but the table names no Go type for it", where)
		case len(cp.types) > 0 && data == nil:
			m.problem("%s: the table names %v for error.data but the schema declares none", where, cp.types[0])
		case data != nil:
			m.checkObject(s, where+".error.data", data, cp.types[0])
		}
	case cpErrorObject:
		code, _ := s.errorParts([]map[string]any{def})
		if code != cp.code {
			m.problem("%s: code %d in the schema, %d in the table", where, code, cp.code)
		}
		m.checkObject(s, where, def, cp.types[0])
	case cpEnvelope:
		m.checkWire(where, props)
	case cpStructural:
		if cp.enum != nil {
			var values []string
			for _, v := range asList(def["enum"]) {
				values = append(values, v.(string))
			}
			a, b := slices.Sorted(slices.Values(values)), slices.Sorted(slices.Values(cp.enum))
			if !slices.Equal(a, b) {
				m.problem("%s: enum %v in the schema, Go constants %v", where, a, b)
			}
		}
		for _, typ := range cp.types {
			m.reach(typ)
		}
	}
}

// checkWire checks that an envelope definition has only JSON-RPC members.
func (m *mapChecker) checkWire(where string, props map[string]map[string]any) {
	for p := range props {
		if !wireMembers[p] {
			m.problem("%s: member %q is not a JSON-RPC message member", where, p)
		}
	}
}

func (m *mapChecker) reach(typ reflect.Type) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if m.reached[typ] || typ.Kind() != reflect.Struct {
		return
	}
	m.reached[typ] = true
	for i := 0; i < typ.NumField(); i++ {
		if f := typ.Field(i); f.Anonymous {
			m.reach(f.Type)
		}
	}
}

// checkObject checks that every property of the object schema node is a
// JSON member of typ, recursing into inline object properties whose Go
// field is a struct, and checking that properties referring to another
// definition use that definition's Go type.
func (m *mapChecker) checkObject(s *specSchema, where string, node map[string]any, typ reflect.Type) {
	m.reach(typ)
	fields := jsonFields(typ)
	if m.covered[typ] == nil {
		m.covered[typ] = map[string]bool{}
	}
	props := s.propsOf(node)
	for _, p := range sortedKeys(props) {
		f, ok := fields[p]
		if !ok {
			m.problem("%s: property %q has no JSON member in %v", where, p, typ)
			continue
		}
		m.covered[typ][p] = true
		base := baseStruct(f.typ)
		if base == nil {
			continue
		}
		ps := props[p]
		for _, ref := range refTargets(ps) {
			if rc, ok := counterparts[ref]; ok && rc.kind == cpDirect && !slices.Contains(rc.types, base) {
				m.problem("%s.%s: refers to %s (carried by %v) but the Go field is a %v", where, p, ref, rc.types, base)
			}
		}
		for _, inline := range inlineObjects(ps) {
			m.checkObject(s, where+"."+p, inline, base)
		}
		if len(refTargets(ps)) > 0 {
			m.reach(base)
		}
	}
}

// refTargets returns the definitions a property schema refers to: itself,
// its array items, or the members of its anyOf/oneOf.
func refTargets(ps map[string]any) []string {
	if ps == nil {
		return nil
	}
	var out []string
	if r, ok := ps["$ref"].(string); ok {
		out = append(out, refName(r))
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		for _, mm := range asList(ps[kw]) {
			out = append(out, refTargets(mm.(map[string]any))...)
		}
	}
	if items, ok := ps["items"].(map[string]any); ok {
		out = append(out, refTargets(items)...)
	}
	return out
}

// inlineObjects returns the object schemas written in place in a property
// schema (not behind a $ref): itself, its items, its anyOf/oneOf members.
func inlineObjects(ps map[string]any) []map[string]any {
	if ps == nil {
		return nil
	}
	var out []map[string]any
	if _, ok := ps["properties"]; ok {
		if _, ref := ps["$ref"]; !ref {
			out = append(out, ps)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		for _, mm := range asList(ps[kw]) {
			out = append(out, inlineObjects(mm.(map[string]any))...)
		}
	}
	if items, ok := ps["items"].(map[string]any); ok {
		out = append(out, inlineObjects(items)...)
	}
	return out
}

// memberSchemas flattens a schema into the object schemas it combines
// (following $ref and allOf); with a name, it returns instead every schema
// given to that property by those.
func (s *specSchema) memberSchemas(node map[string]any, name string) []map[string]any {
	if node == nil {
		return nil
	}
	node, _ = s.resolve(node)
	var out []map[string]any
	if name == "" {
		out = append(out, node)
	} else if p, ok := asMap(node["properties"])[name].(map[string]any); ok {
		out = append(out, p)
	}
	for _, mm := range asList(node["allOf"]) {
		out = append(out, s.memberSchemas(mm.(map[string]any), name)...)
	}
	return out
}

// errorParts returns the constant code and the most specific data schema
// of an error object made of the given schemas.
func (s *specSchema) errorParts(parts []map[string]any) (code int64, data map[string]any) {
	for _, part := range parts {
		for _, c := range s.memberSchemas(part, "code") {
			if v, ok := c["const"]; ok {
				fmt.Sscan(fmt.Sprint(v), &code)
			}
		}
		for _, d := range s.memberSchemas(part, "data") {
			if _, ok := d["properties"]; ok {
				data = d
			}
		}
	}
	return code, data
}

func constOf(ps map[string]any) string {
	if ps == nil {
		return ""
	}
	c, _ := ps["const"].(string)
	return c
}

func overlaps(a, b []reflect.Type) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// exportedStructs lists the exported struct types declared by the
// package's non-test files.
func exportedStructs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() && ts.Assign == 0 {
					out = append(out, ts.Name.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestSchemaSamples marshals the samples of every revision
// (schema_samples_test.go), frames them with package jsonrpc, validates
// them against their revision's definitions (as published, and closed:
// no member the revision does not declare), checks that full samples show
// every property of their definition (inline sub-objects included), and
// decodes them back, through jsonrpc.Decode, to the same JSON and to a Go
// value equal to the one sent (see [goDiff]).
func TestSchemaSamples(t *testing.T) {
	schemas := loadSchemas(t)
	for _, rev := range allRevisions {
		s := schemas[rev]
		samples := samplesFor(rev)
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			validations := 0
			names := map[string]bool{}
			for i, smp := range samples {
				if names[smp.name] {
					t.Errorf("duplicate sample name %q", smp.name)
				}
				names[smp.name] = true
				validations += checkSample(t, s, i, smp)
			}
			t.Logf("%s: %d samples, %d schema validations", rev, len(samples), validations)
		})
	}
}

// checkSample checks one sample and returns how many validations passed.
func checkSample(t *testing.T, s *specSchema, n int, smp sample) (validations int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s %q (%s): %s", s.rev, smp.name, smp.def, fmt.Sprintf(format, args...))
	}
	if s.def(smp.def) == nil {
		fail("no such definition in this revision")
		return 0
	}
	var payload []byte
	if smp.value != nil {
		payload = marshal(t, smp.value)
	}

	// The message as sent, and the form the definition describes.
	id := jsonrpc.Int64ID(int64(n + 1))
	if n%3 == 2 {
		id = jsonrpc.StringID(fmt.Sprintf("req-%d", n+1))
	}
	var wire, form, closedForm []byte
	var envelopes []string // generic definitions the whole message must satisfy
	var err error
	switch smp.kind {
	case sObject:
		form = payload
	case sResult:
		form = payload
		wire, err = jsonrpc.Marshal(&jsonrpc.Message{ID: id, Body: smp.value})
		envelopes = []string{"JSONRPCMessage", firstDef(s, "JSONRPCResultResponse", "JSONRPCResponse")}
		resp := smp.response
		if resp == "" {
			resp = smp.def + "Response"
		}
		if s.def(resp) != nil {
			envelopes = append(envelopes, resp)
		} else if smp.response != "" {
			fail("no response definition %s", resp)
		}
	case sRequest, sNotification:
		m := &jsonrpc.Message{Method: smp.method, Body: smp.value}
		envelopes = []string{"JSONRPCMessage", "JSONRPCNotification"}
		if smp.kind == sRequest {
			m.ID = id
			envelopes[1] = "JSONRPCRequest"
		}
		wire, err = jsonrpc.Marshal(m)
		form = wire
		if !s.isEnvelope(smp.def) {
			// Before 2025-11-25 the definition describes method and
			// params only: the published schema accepts the whole
			// message, the closed one only those two members.
			closedForm = methodParams(t, smp.method, payload)
		}
	case sInputRequest:
		form = methodParams(t, smp.method, payload)
	case sError:
		e := &jsonrpc.Error{Code: smp.code, Message: "sample error", Data: payload}
		wire, err = jsonrpc.Marshal(&jsonrpc.Message{ID: id, Error: e})
		envelopes = []string{"JSONRPCMessage", firstDef(s, "JSONRPCErrorResponse", "JSONRPCError")}
		form = wire
		if _, ok := s.propsOf(s.def(smp.def))["error"]; !ok {
			form = marshal(t, e) // an error object definition
		}
	}
	if err != nil {
		fail("jsonrpc.Marshal: %v", err)
		return validations
	}

	// Validation: the definition, the unions listing it, the envelopes.
	targets := []string{smp.def}
	for _, u := range s.defNames() {
		if slices.Contains(s.unionMembers(u), smp.def) {
			targets = append(targets, u)
		}
	}
	for _, closed := range []bool{false, true} {
		mode := "published"
		if closed {
			mode = "closed"
		}
		f := form
		if closed && closedForm != nil {
			f = closedForm
		}
		for _, def := range targets {
			if err := s.validate(def, f, closed); err != nil {
				fail("invalid against %s (%s schema):\n%s\n%v", def, mode, f, err)
			} else {
				validations++
			}
		}
		for _, def := range envelopes {
			if err := s.validate(def, wire, closed); err != nil {
				fail("message invalid against %s (%s schema):\n%s\n%v", def, mode, wire, err)
			} else {
				validations++
			}
		}
	}

	if smp.full {
		checkFull(t, s, smp, payload, fail)
	}

	// Round trip: through jsonrpc.Decode when framed, then into a new Go
	// value and back.
	raw := payload
	if wire != nil {
		m, err := jsonrpc.Decode(wire, jsonrpc.Limits{})
		if err != nil {
			fail("jsonrpc.Decode: %v\n%s", err, wire)
			return validations
		}
		switch smp.kind {
		case sRequest, sNotification:
			raw = m.Params
			if m.Method != smp.method {
				fail("decoded method %q", m.Method)
			}
			if IsStateless(s.rev) && smp.kind == sRequest && jsonrpc2.Meta(m).ProtocolVersion != s.rev {
				fail("jsonrpc.Decode sniffed protocol version %q", jsonrpc2.Meta(m).ProtocolVersion)
			}
		case sResult:
			raw = m.Result
		case sError:
			raw = m.Error.Data
			if m.Error.Code != smp.code {
				fail("decoded code %d", m.Error.Code)
			}
		}
		if m.ID != id && smp.kind != sNotification {
			fail("decoded id %v, sent %v", m.ID, id)
		}
	}
	if smp.value == nil {
		if len(raw) != 0 {
			fail("decoded payload %s where none was sent", raw)
		}
		return validations
	}
	decoded, err := roundTrip(raw, reflect.TypeOf(smp.value).Elem())
	if err != nil {
		fail("%v", err)
	} else if diff := goDiff(reflect.ValueOf(smp.value).Elem(), decoded.Elem(), ""); diff != "" {
		fail("the decoded Go value differs from the one sent: %s\n%s", diff, raw)
	}
	return validations
}

// goDiff compares a Go value with the value decoded from its JSON and
// describes the first difference, or returns "". Raw JSON and values of
// interface type compare as canonical JSON; nil and empty slices are the
// same (omitempty sends neither), but an empty map must not come back nil:
// it is an explicit {} (a capability flag, an empty form).
func goDiff(a, b reflect.Value, path string) string {
	if a.Type() == reflect.TypeFor[jsontext.Value]() {
		ca, _ := canonical(a.Bytes())
		cb, _ := canonical(b.Bytes())
		if ca != cb {
			return fmt.Sprintf("%s: %s != %s", path, a.Bytes(), b.Bytes())
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Interface:
		ja, _ := json.Marshal(a.Interface())
		jb, _ := json.Marshal(b.Interface())
		ca, _ := canonical(ja)
		cb, _ := canonical(jb)
		if ca != cb {
			return fmt.Sprintf("%s: %s != %s", path, ja, jb)
		}
	case reflect.Map:
		if a.IsNil() && b.Len() == 0 {
			return "" // a required member sent as {} (tool_use input)
		}
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v, decoded nil %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries, decoded %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if d := goDiff(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); d != "" {
				return d
			}
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d, decoded %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := goDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v, decoded nil %v", path, a.IsNil(), b.IsNil())
		}
		if !a.IsNil() {
			return goDiff(a.Elem(), b.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				if !a.Field(i).Equal(b.Field(i)) {
					return fmt.Sprintf("%s: %v != %v", path, a.Interface(), b.Interface())
				}
				continue
			}
			if d := goDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	default:
		if !a.Equal(b) {
			return fmt.Sprintf("%s: %v != %v", path, a.Interface(), b.Interface())
		}
	}
	return ""
}

// roundTrip decodes raw into a new value of type typ, rejecting members the
// type cannot hold, marshals it again and compares; it returns the
// decoded value (a pointer).
func roundTrip(raw []byte, typ reflect.Type) (reflect.Value, error) {
	v := reflect.New(typ)
	if err := json.Unmarshal(raw, v.Interface(), json.RejectUnknownMembers(true)); err != nil {
		return v, fmt.Errorf("decoding into %v: %v\n%s", typ, err, raw)
	}
	again, err := json.Marshal(v.Interface())
	if err != nil {
		return v, fmt.Errorf("marshalling the decoded %v: %v", typ, err)
	}
	a, err1 := canonical(raw)
	b, err2 := canonical(again)
	if err1 != nil || err2 != nil {
		return v, fmt.Errorf("canonicalizing: %v, %v", err1, err2)
	}
	if a != b {
		return v, fmt.Errorf("round trip through %v is lossy:\nsent    %s\ndecoded %s", typ, a, b)
	}
	return v, nil
}

// checkFull checks that the payload of a full sample shows every property
// its definition declares.
func checkFull(t *testing.T, s *specSchema, smp sample, payload []byte, fail func(string, ...any)) {
	t.Helper()
	def := s.def(smp.def)
	var node map[string]any
	switch smp.kind {
	case sObject, sResult:
		node = def
	case sRequest, sNotification, sInputRequest:
		node = s.propsOf(def)["params"]
	case sError:
		if _, ok := s.propsOf(def)["error"]; ok {
			_, node = s.errorParts(s.memberSchemas(s.propsOf(def)["error"], ""))
		} else {
			node = def
		}
	}
	if node == nil {
		fail("full, but the definition declares no payload")
		return
	}
	var got map[string]any
	if err := json.Unmarshal(payload, &got); err != nil {
		fail("full, but the payload is not an object: %s", payload)
		return
	}
	if smp.kind == sError && s.propsOf(def)["error"] == nil {
		got = map[string]any{"code": 0, "message": "", "data": got}
	}
	want := s.propsOf(node)
	// A union of object definitions: only the members the payload matches.
	if resolved, _ := s.resolve(node); resolved["anyOf"] != nil {
		want = map[string]map[string]any{}
		for _, ref := range refTargets(resolved) {
			if s.validate(ref, payload, false) == nil {
				maps.Copy(want, s.propsOf(s.def(ref)))
			}
		}
	}
	var missing []string
	for p, ps := range want {
		v, ok := got[p]
		if !ok {
			missing = append(missing, p)
			continue
		}
		missing = append(missing, missingInline(s, p, ps, v)...)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		fail("full sample lacks %s:\n%s", strings.Join(missing, ", "), payload)
	}
}

// missingInline returns the properties of the object schemas written in
// place in ps (not behind a $ref, whose definitions have samples of their
// own) that v lacks, with their paths. JSON Schemas (inputSchema,
// outputSchema) and _meta are not descended into.
func missingInline(s *specSchema, path string, ps map[string]any, v any) []string {
	switch path[strings.LastIndexByte(path, '.')+1:] {
	case "_meta", "inputSchema", "outputSchema":
		return nil
	}
	if ps == nil || ps["$ref"] != nil {
		return nil
	}
	if items, ok := ps["items"].(map[string]any); ok {
		var out []string
		for _, e := range asList(v) {
			out = append(out, missingInline(s, path+"[]", items, e)...)
		}
		return out
	}
	props, ok := ps["properties"].(map[string]any)
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil
	}
	var out []string
	for p, sub := range props {
		pv, ok := obj[p]
		if !ok {
			out = append(out, path+"."+p)
			continue
		}
		out = append(out, missingInline(s, path+"."+p, asMap(sub), pv)...)
	}
	return out
}

// methodParams is the {method, params} form of a request or notification,
// as the legacy definitions and the 2026-07-28 input requests describe it.
func methodParams(t *testing.T, method string, params []byte) []byte {
	t.Helper()
	var v struct {
		Method string         `json:"method"`
		Params jsontext.Value `json:"params,omitempty"`
	}
	v.Method, v.Params = method, params
	return marshal(t, &v)
}

// firstDef returns the first of the names the schema defines.
func firstDef(s *specSchema, names ...string) string {
	for _, n := range names {
		if s.def(n) != nil {
			return n
		}
	}
	return names[len(names)-1]
}
