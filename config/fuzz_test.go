package config

import (
	"errors"
	"os"
	"path/filepath"
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

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "${env:A}", "x${A-${B}}y", "${", "${${}}", "}${A}{"} {
		f.Add(s)
	}
	vars := testVars()
	f.Fuzz(func(t *testing.T, s string) {
		vars.Expand(s) // must not panic or loop
	})
}
