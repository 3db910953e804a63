package main

import (
	"os"
	"path/filepath"
	"testing"
)

// -token-file reads a ferry serve --token-file: the first line with a
// token gives it, as ferry serve would read that line.
func TestRunTokenFile(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"one token", "s3cret\n", "s3cret"},
		{"caller and roles", "tok-a alice engineer admin\ntok-b bob\n", "tok-a"},
		{"comments and blank lines first", "# the callers\n\n  \t\n  tok-c carol  \n", "tok-c"},
		{"no newline at the end", "tok-d", "tok-d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.txt")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			opts, err := httpOptions(false, "say", path)
			if err != nil || opts.Bearer != c.want || opts.Tool != "say" {
				t.Errorf("httpOptions = %+v, %v; want the bearer %q and the tool say", opts, err, c.want)
			}
		})
	}
}

// What -tool and -token-file cannot do is an error, not a run without
// them: over stdio, a file with no token, a file that is not there, a
// name a request cannot carry.
func TestRunHTTPOptionsRefused(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, []byte("# nobody\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		stdio           bool
		tool, tokenFile string
	}{
		{"tool over stdio", true, "say", ""},
		{"token over stdio", true, "echo", empty},
		{"no token in the file", false, "echo", empty},
		{"no file", false, "echo", filepath.Join(t.TempDir(), "missing")},
		{"tool name with a space", false, "say it", ""},
	}
	for _, c := range cases {
		if _, err := httpOptions(c.stdio, c.tool, c.tokenFile); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
