package protocol

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// specDir, when set, makes TestUpdateSpecTestdata refresh testdata/spec
// from a copy of the specification repository's schema/ folder layout
// (<dir>/<revision>/schema/schema.json and the .mdx pages):
//
//	go test ./protocol -run TestUpdateSpecTestdata -spec=/path/to/spec
var specDir = flag.String("spec", "", "refresh testdata/spec from this specification folder")

// specExample is one JSON example of a specification page.
type specExample struct {
	File    string         `json:"file"`
	Line    int            `json:"line"`
	Example jsontext.Value `json:"example"`
}

// TestUpdateSpecTestdata copies each revision's schema.json and extracts
// the JSON examples of its pages into testdata/spec/<revision>/.
func TestUpdateSpecTestdata(t *testing.T) {
	if *specDir == "" {
		t.Skip("run with -spec=DIR to refresh testdata/spec")
	}
	for _, rev := range allRevisions {
		src := filepath.Join(*specDir, rev)
		dst := filepath.Join("testdata", "spec", rev)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		schema, err := os.ReadFile(filepath.Join(src, "schema", "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "schema.json"), schema, 0o644); err != nil {
			t.Fatal(err)
		}
		var examples []specExample
		err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".mdx") {
				return err
			}
			page, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			examples = append(examples, extractExamples(filepath.ToSlash(rel), page)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(examples, jsontext.Multiline(true), jsontext.WithIndent("\t"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "examples.json"), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d examples", rev, len(examples))
	}
}

var jsonBlock = regexp.MustCompile("(?s)```json[^\n]*\n(.*?)```")

// extractExamples returns the JSON objects of a page's ```json blocks.
// Comments ("// or ...") and trailing commas, which some examples have,
// are removed first; blocks that still do not parse ("[...]") are left
// out.
func extractExamples(file string, page []byte) []specExample {
	var out []specExample
	for _, m := range jsonBlock.FindAllSubmatchIndex(page, -1) {
		body := cleanJSON(page[m[2]:m[3]])
		v := jsontext.Value(body)
		if !v.IsValid() || v.Kind() != '{' {
			continue
		}
		if err := v.Compact(); err != nil {
			continue
		}
		out = append(out, specExample{File: file, Line: bytes.Count(page[:m[0]], []byte("\n")) + 1, Example: v})
	}
	return out
}

// cleanJSON removes // comments outside strings and commas before a
// closing bracket.
func cleanJSON(b []byte) []byte {
	var out []byte
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			i--
		default:
			out = append(out, c)
		}
	}
	return regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(out, []byte("$1"))
}

// knownSpecIssues are examples of the specification pages that disagree
// with their revision's schema, keyed "revision file:line", with what is
// wrong. They are reported in the log, not as failures: the Go types
// follow the schema.
var knownSpecIssues = map[string]string{
	"2025-06-18 server/tools.mdx:279": annotationsInContents,
	"2025-11-25 server/tools.mdx:304": annotationsInContents,
	"2026-07-28 server/tools.mdx:478": annotationsInContents,
	"2025-11-25 client/elicitation.mdx:121": "the string field example has \"pattern\", which StringSchema does not declare " +
		"(2026-07-28 dropped it from the page)",
}

const annotationsInContents = "the embedded resource example puts annotations inside resource (TextResourceContents, " +
	"which has no annotations in any revision) instead of on the EmbeddedResource block"

// TestSpecExamples decodes the JSON examples of the specification pages
// (testdata/spec/<revision>/examples.json) into the Go types: every
// example that can be told apart (a message, or a fragment such as a
// content block or a tool) must decode with no unknown member and
// marshal back to the same JSON. Examples are also validated against
// their definitions, which reports where the pages and the schema
// disagree.
func TestSpecExamples(t *testing.T) {
	schemas := loadSchemas(t)
	for _, rev := range allRevisions {
		s := schemas[rev]
		raw, err := os.ReadFile(filepath.Join("testdata", "spec", rev, "examples.json"))
		if err != nil {
			t.Fatal(err)
		}
		var examples []specExample
		if err := json.Unmarshal(raw, &examples); err != nil {
			t.Fatal(err)
		}
		ex := exampleChecker{t: t, s: s}
		for _, e := range examples {
			ex.check(e)
		}
		t.Logf("%s: %d examples: %d valid against the published schema, %d decoded into Go losslessly, %d not classified, %d known to disagree with the schema",
			rev, len(examples), ex.validated, ex.decoded, ex.skipped, ex.known)
	}
}

// exampleChecker classifies and checks the examples of one revision.
type exampleChecker struct {
	t          *testing.T
	s          *specSchema
	lastMethod map[string]string // the last request method of each page
	lastParams map[string]map[string]any

	decoded, validated, skipped, known int
}

func (x *exampleChecker) check(e specExample) {
	t, s := x.t, x.s
	if x.lastMethod == nil {
		x.lastMethod, x.lastParams = map[string]string{}, map[string]map[string]any{}
	}
	where := fmt.Sprintf("%s %s:%d", s.rev, e.File, e.Line)
	var v map[string]any
	if err := json.Unmarshal(e.Example, &v); err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	def, form, payload, typ := x.classify(e, v)
	if def == "" {
		x.skipped++
		if testing.Verbose() {
			c := jsontext.Value(bytes.Clone(e.Example))
			c.Compact()
			t.Logf("%s: not classified: %.100s", where, c)
		}
		return
	}
	// Against the published schema, then the closed one (no member the
	// revision does not declare).
	err := s.validate(def, withBase64(t, form), false)
	if err == nil {
		x.validated++
		err = s.validate(def, withBase64(t, form), true)
	}
	if why, ok := knownSpecIssues[where]; ok {
		if err == nil {
			t.Errorf("%s: knownSpecIssues lists it, but it agrees with %s now", where, def)
			return
		}
		x.known++
		t.Logf("%s: disagrees with %s (known: %s)", where, def, why)
		return
	}
	if err != nil {
		t.Errorf("%s: the example disagrees with %s: %v\n%s", where, def, err, form)
		return
	}
	if typ == nil || payload == nil {
		return
	}
	v2 := reflect.New(typ)
	if err := json.Unmarshal(payload, v2.Interface(), json.RejectUnknownMembers(true)); err != nil {
		t.Errorf("%s: decoding into %v: %v\n%s", where, typ, err, payload)
		return
	}
	again := marshal(t, v2.Interface())
	var a, b any
	json.Unmarshal(payload, &a)
	json.Unmarshal(again, &b)
	if d := jsonDiff(a, b, ""); d != "" {
		t.Errorf("%s: decoding into %v loses %s\nexample %s\ndecoded %s", where, typ, d, payload, again)
		return
	}
	x.decoded++
}

// jsonDiff compares an example with what its decoded Go value marshals
// to. Members with a zero JSON value (false, 0, "", null, [], {}) may be
// left out: the Go types omit defaults.
func jsonDiff(a, b any, path string) string {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s (an object, now %v)", path, b)
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok {
				if isZeroJSON(av) {
					continue
				}
				return fmt.Sprintf("%s.%s", path, k)
			}
			if d := jsonDiff(av, bv, path+"."+k); d != "" {
				return d
			}
		}
		for k := range bm {
			if _, ok := a[k]; !ok {
				return fmt.Sprintf("%s.%s (added)", path, k)
			}
		}
	case []any:
		bl, ok := b.([]any)
		if !ok || len(bl) != len(a) {
			return fmt.Sprintf("%s (an array of %d, now %v)", path, len(a), b)
		}
		for i := range a {
			if d := jsonDiff(a[i], bl[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	default:
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("%s (%v, now %v)", path, a, b)
		}
	}
	return ""
}

func isZeroJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case float64:
		return v == 0
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// withBase64 replaces the placeholders of the pages' base64 members
// ("base64-encoded-data") by valid base64, so that the format check looks
// at the rest.
func withBase64(t *testing.T, b []byte) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return b
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if str, ok := x.(string); ok && (k == "data" || k == "blob") {
					if _, err := base64.StdEncoding.DecodeString(str); err != nil {
						v[k] = "AA=="
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return marshal(t, v)
}

// classify finds the definition of an example, the JSON to validate
// against it, and the payload to decode into which Go type (nil: do not
// decode).
func (x *exampleChecker) classify(e specExample, v map[string]any) (def string, form, payload []byte, typ reflect.Type) {
	s := x.s
	member := func(name string) []byte {
		if _, ok := v[name]; !ok {
			return nil
		}
		b, _ := json.Marshal(v[name])
		return b
	}
	switch {
	case v["method"] != nil:
		method, _ := v["method"].(string)
		def = methodDef(s, method)
		if def == "" {
			return "", nil, nil, nil
		}
		params, _ := v["params"].(map[string]any)
		if _, isRequest := v["id"]; isRequest {
			x.lastMethod[e.File], x.lastParams[e.File] = method, params
		}
		form = e.Example
		if IsStateless(s.rev) && params != nil && s.required(s.propsOf(s.def(def))["params"]) != nil {
			// The 2026-07-28 pages leave out the per-request _meta "for
			// brevity", as they say: put the required members back.
			form = withRequestMeta(x.t, s, v)
		}
		if !s.isEnvelope(def) {
			form = methodParams(x.t, method, member("params"))
		}
		cp := counterparts[def]
		if cp.kind == cpRequest || cp.kind == cpNotification {
			typ = cp.types[0]
		}
		return def, form, member("params"), typ
	case v["result"] != nil:
		result, _ := v["result"].(map[string]any)
		method := x.lastMethod[e.File]
		switch {
		case result["resultType"] == ResultInputRequired:
			def = "InputRequiredResult"
		case method == "":
			return "", nil, nil, nil
		case result["task"] != nil && x.lastParams[e.File]["task"] != nil:
			def = "CreateTaskResult"
		default:
			def = strings.TrimSuffix(methodDef(s, method), "Request") + "Result"
			if s.def(def) == nil {
				def = "EmptyResult"
			}
		}
		payload = member("result")
		if cp := counterparts[def]; cp.kind == cpDirect {
			typ = cp.types[0]
		}
		return def, payload, payload, typ
	case v["error"] != nil:
		def = firstDef(s, "JSONRPCErrorResponse", "JSONRPCError")
		errObj, _ := v["error"].(map[string]any)
		code := fmt.Sprint(errObj["code"])
		for _, name := range sortedKeys(counterparts) {
			if cp := counterparts[name]; cp.kind == cpErrorEnvelope && fmt.Sprint(cp.code) == code && len(cp.types) > 0 && s.def(name) != nil {
				def, typ = name, cp.types[0]
			}
		}
		data, _ := json.Marshal(errObj["data"])
		if errObj["data"] == nil {
			data = nil
		}
		return def, e.Example, data, typ
	}

	// Fragments.
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := v[n]; !ok {
				return false
			}
		}
		return true
	}
	sub := func(def string, value any, typ reflect.Type) (string, []byte, []byte, reflect.Type) {
		if s.def(def) == nil {
			return "", nil, nil, nil
		}
		b := marshal(x.t, value)
		return def, b, b, typ
	}
	if len(v) == 1 {
		for k, val := range v {
			switch {
			case k == "capabilities":
				def := "ClientCapabilities"
				switch {
				case strings.HasPrefix(e.File, "server/"):
					def = "ServerCapabilities"
				case strings.HasPrefix(e.File, "client/"):
				case s.validate("ServerCapabilities", marshal(x.t, val), true) == nil:
					def = "ServerCapabilities"
				}
				return sub(def, val, counterparts[def].types[0])
			case k == "_meta" && asMap(val)[MetaClientCapabilities] != nil:
				return sub("ClientCapabilities", asMap(val)[MetaClientCapabilities], tt[ClientCapabilities]())
			case k == MetaRelatedTask:
				return sub("RelatedTaskMetadata", val, tt[RelatedTaskMetadata]())
			case k == "task":
				return sub("TaskMetadata", val, tt[TaskMetadata]())
			}
		}
	}
	if IsStateless(s.rev) && len(v) > 0 {
		requests, responses := true, true
		for _, val := range v {
			m := asMap(val)
			requests = requests && m["method"] != nil
			responses = responses && m != nil && m["method"] == nil && (m["action"] != nil || m["role"] != nil || m["roots"] != nil)
		}
		switch {
		case requests:
			return sub("InputRequests", v, tt[map[string]InputRequest]())
		case responses:
			return sub("InputResponses", v, tt[map[string]jsontext.Value]())
		}
	}
	switch v["type"] {
	case "string", "number", "integer", "boolean", "array":
		// An elicitation form field: raw JSON Schema in Go.
		return sub("PrimitiveSchemaDefinition", v, nil)
	}
	contentDefs := map[string]string{ContentText: "TextContent", ContentImage: "ImageContent", ContentAudio: "AudioContent",
		ContentResourceLink: "ResourceLink", ContentResource: "EmbeddedResource", ContentToolUse: "ToolUseContent", ContentToolResult: "ToolResultContent"}
	if ty, ok := v["type"].(string); ok && contentDefs[ty] != "" && s.def(contentDefs[ty]) != nil && !has("properties") {
		return contentDefs[ty], e.Example, e.Example, tt[Content]()
	}
	switch {
	case has("uri", "text") && !has("name"):
		def, typ = "TextResourceContents", tt[ResourceContents]()
	case has("uri", "blob"):
		def, typ = "BlobResourceContents", tt[ResourceContents]()
	case has("name", "inputSchema"):
		def, typ = "Tool", tt[Tool]()
	case has("uriTemplate", "name"):
		def, typ = "ResourceTemplate", tt[ResourceTemplate]()
	case has("uri", "name") && strings.Contains(e.File, "roots"):
		def, typ = "Root", tt[Root]()
	case has("uri", "name"):
		def, typ = "Resource", tt[Resource]()
	case has("roots"):
		def, typ = "ListRootsResult", tt[ListRootsResult]()
	case has("action"):
		def, typ = "ElicitResult", tt[ElicitResult]()
	case has("role", "content", "model"):
		def, typ = "CreateMessageResult", tt[CreateMessageResult]()
	case has("role", "content") && strings.Contains(e.File, "sampling"):
		def, typ = "SamplingMessage", tt[SamplingMessage]()
	case has("role", "content") && strings.Contains(e.File, "prompts"):
		def, typ = "PromptMessage", tt[PromptMessage]()
	case has("hints") || has("costPriority"):
		def, typ = "ModelPreferences", tt[ModelPreferences]()
	default:
		return "", nil, nil, nil
	}
	if s.def(def) == nil {
		return "", nil, nil, nil
	}
	return def, e.Example, e.Example, typ
}

// methodDef returns the request or notification definition of a method.
func methodDef(s *specSchema, method string) string {
	var defs []string
	for _, name := range s.defNames() {
		if constOf(s.propsOf(s.def(name))["method"]) == method && !strings.HasPrefix(name, "Client") && !strings.HasPrefix(name, "Server") {
			defs = append(defs, name)
		}
	}
	sort.Strings(defs)
	if len(defs) == 0 {
		return ""
	}
	return defs[0]
}

// withRequestMeta returns the message with the required per-request _meta
// members added where the example leaves them out.
func withRequestMeta(t *testing.T, s *specSchema, v map[string]any) []byte {
	t.Helper()
	v = deepCopy(v).(map[string]any)
	params := v["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		params["_meta"] = meta
	}
	for _, k := range []string{MetaProtocolVersion, MetaClientCapabilities} {
		if _, ok := meta[k]; !ok {
			if k == MetaProtocolVersion {
				meta[k] = s.rev
			} else {
				meta[k] = map[string]any{}
			}
		}
	}
	return marshal(t, v)
}
