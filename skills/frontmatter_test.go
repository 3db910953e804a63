package skills_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/skills"
)

// TestParseFrontmatter: the JSON of each frontmatter is what the yaml
// package of the conformance suite (YAML 1.2 core schema) makes of it;
// the expectations were produced by that package.
func TestParseFrontmatter(t *testing.T) {
	for _, tc := range []struct{ name, yaml, json string }{
		{"plain", "name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n",
			`{"description":"Extract, fill, and assemble PDF documents","name":"pdf-processing"}`},
		{"scalars and nesting", "name: a\ndescription: >\n  Folded text\n  continues here.\n\n  New para.\n    more indented\n  back\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n  author: someone\n  n: 12\n  f: 1.5\n  e: 1e3\n  b: yes\n  t: true\n  nul: ~\n  octal: 0o17\n  hex: 0xFF\n  under: 1_000\n",
			`{"description":"Folded text continues here.\nNew para.\n  more indented\nback\n","license":"Apache-2.0","metadata":{"author":"someone","b":"yes","e":1000,"f":1.5,"hex":255,"n":12,"nul":null,"octal":15,"t":true,"under":"1_000","version":"2.1.0"},"name":"a"}`},
		{"sequences and flow", "name: b\ndescription: |-\n  line1\n   line2\n\nallowed-tools: [Bash, \"Read\", 'Write it']\ntags:\n- one\n- two: 2\n  three: 3\n- - nested\n  - seq\nflow: {a: 1, \"b\": two}\n",
			`{"allowed-tools":["Bash","Read","Write it"],"description":"line1\n line2","flow":{"a":1,"b":"two"},"name":"b","tags":["one",{"three":3,"two":2},["nested","seq"]]}`},
		{"comments and quotes", "name: c   # comment\ndescription: 'it''s' # trailing\nkey with spaces: plain value with # hash\nempty:\nlist:\n  - x\n  -\n  - \"q\\tq\\u00e9\"\n",
			`{"description":"it's","empty":null,"key with spaces":"plain value with","list":["x",null,"q\tqé"],"name":"c"}`},
		{"multi-line plain, keep", "name: d\ndescription: multi line\n  plain scalar\n\n  with blank\nkeep: |+\n  a\n\nend: 1\n",
			`{"description":"multi line plain scalar\nwith blank","end":1,"keep":"a\n\n","name":"d"}`},
		{"numbers and strings", "name: e\ndescription: x\nnum: -12\nneg: +3.5\ndot: .5\nstr: 1.2.3\nver: 2.10\ndate: 2024-01-01\n",
			`{"date":"2024-01-01","description":"x","dot":0.5,"name":"e","neg":3.5,"num":-12,"str":"1.2.3","ver":2.1}`},
	} {
		m, body, err := skills.ParseFrontmatter([]byte("---\n" + tc.yaml + "---\nBody\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got, _ := json.Marshal(m, json.Deterministic(true))
		want := jsontext.Value(tc.json)
		gotV := jsontext.Value(got)
		if want.Canonicalize() != nil || gotV.Canonicalize() != nil || string(gotV) != string(want) || string(body) != "Body\n" {
			t.Errorf("%s:\n got %s (body %q)\nwant %s", tc.name, got, body, tc.json)
		}
	}
}

// TestParseFrontmatterRefuses: what is not frontmatter, or YAML this
// decoder does not take, is an error saying where, never a guess.
func TestParseFrontmatterRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# no frontmatter\n", "does not begin with ---"},
		{"---\nname: a\n", "the closing --- is missing"},
		{"---\nname: &x a\ndescription: *x\n---\n", "frontmatter line 2: unsupported YAML: anchors"},
		{"---\nname: !!str a\n---\n", "line 2: unsupported YAML"},
		{"---\nname: a\nname: b\n---\n", `line 3: duplicate key "name"`},
		{"---\nname: a\n  x: y\n---\n", "line 3: unsupported YAML: a mapping in a plain scalar"},
		{"---\n- a\n---\n", "frontmatter is not a mapping"},
		{"---\nname: \"open\n---\n", "line 2: unterminated quoted scalar"},
		{"---\nname: [a, [b]]\n---\n", "nested flow collections"},
		{"---\nn: .inf\n---\n", "line 2: .inf cannot be a JSON value"},
		{"---\nn: 1e999\n---\n", "does not fit a JSON number"},
		{"---\nn: \"\\q\"\n---\n", `invalid escape \q`},
		{"---\n  name: a\n---\n", "the first key is indented"},
		{"---\nname: a\n\tdescription: b\n---\n", "line 3: tabs cannot indent YAML"},
		{"---\n" + strings.Repeat("- ", 100) + "x\n---\n", "nested deeper than 64 levels"},
		{"---\nk:\n" + nested(100) + "---\n", "nested deeper than 64 levels"},
	} {
		_, _, err := skills.ParseFrontmatter([]byte(tc.in))
		var fe *skills.FrontmatterError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &fe) && !errors.Is(err, skills.ErrNoFrontmatter) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// nested is a mapping n levels deep.
func nested(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

// FuzzParseFrontmatter: any input decodes to a JSON object or fails with
// an error; never a panic, and decoding again gives the same object.
func FuzzParseFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\n",
		"---\nd: >-\n  a\n  b\n\n   c\nl: |+\n  x\n\n---\n",
		"---\nt:\n- a\n- b: c\n  d: [1, 'x', \"y\"]\n- - z\nm: {k: v}\n---\nbody",
		"\ufeff---\r\nname: 'it''s' # c\r\n---\r\n",
		"---\nn: 0x1F\no: 0o7\nf: -1.5e3\nnul: ~\nb: TRUE\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := skills.ParseFrontmatter(data)
		if err != nil {
			return
		}
		a, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			t.Fatalf("%q decodes to %v, which JSON cannot encode: %v", data, m, err)
		}
		m2, _, _ := skills.ParseFrontmatter(data)
		if b, _ := json.Marshal(m2, json.Deterministic(true)); string(a) != string(b) {
			t.Fatalf("%q decodes to %s, then %s", data, a, b)
		}
	})
}
