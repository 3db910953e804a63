package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any input either fails with a *Error naming the file, or
// parses into servers that each have a transport or an error.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Add([]byte(`{"servers":{"a":{"command":["x",1,true],"headers":"A: b\nC: d","timeout":1e400}}}`))
	f.Add([]byte("{\"mcpServers\":{\"a\":{\"command\":\"${A:-${B:-${C}}}\"}}}"))
	vars := testVars()
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.json", data, &Options{Vars: vars, Project: "/p"})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "fuzz.json" {
				t.Fatalf("error %v is not a *Error naming the file", err)
			}
			_ = err.Error()
			return
		}
		for _, s := range file.Servers {
			if s.Err != nil {
				var ce *Error
				if !errors.As(s.Err, &ce) || ce.Server != s.Name {
					t.Fatalf("server %q: error %v does not name it", s.Name, s.Err)
				}
				continue
			}
			switch s.Transport {
			case Stdio:
				if s.Command == "" {
					t.Fatalf("stdio server %q without a command", s.Name)
				}
			case HTTP, SSE, WebSocket:
				if s.URL == "" {
					t.Fatalf("%s server %q without a URL", s.Transport, s.Name)
				}
			default:
				t.Fatalf("server %q: transport %q", s.Name, s.Transport)
			}
		}
	})
}

// FuzzExpand: any text expands without panic, and with the bounds that
// keep interpolation linear: each reference is looked up at most once (so
// no text is resolved again), the result grows by at most one value per
// reference, and text without "${" comes back as it is. (A result may
// hold "${": "${A-$}{" is "${" when A is unset, as in sh.)
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "${env:A}", "x${A-${B}}y", "${", "${${}}", "}${A}{",
		"${HOME}/${EMPTY:-${API_KEY}}", "${X:-${Y:-${Z:-${userHome}}}}", "${input:tok-${GITHUB_TOKEN}}", "${EMPTY-z}${/}"} {
		f.Add(s)
	}
	vars := testVars()
	longest := len(vars.Workspace)
	f.Fuzz(func(t *testing.T, s string) {
		lookups := 0
		v := vars
		v.Lookup = func(k string) (string, bool) {
			lookups++
			return vars.Lookup(k)
		}
		out, err := v.Expand(s)
		refs := strings.Count(s, "${")
		if lookups > refs {
			t.Fatalf("%d lookups for %d references", lookups, refs)
		}
		if refs == 0 && (err != nil || out != s) {
			t.Fatalf("text without references became %q, %v", out, err)
		}
		if err != nil {
			return
		}
		if len(out) > len(s)+refs*longest {
			t.Fatalf("%d bytes from %d with %d references", len(out), len(s), refs)
		}
	})
}
