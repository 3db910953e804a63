package stdio

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
)

// TestEnvironment: a server gets the few default variables of its
// system and its own, not the rest of its client's environment (issue
// 29, finding 8: a gateway's servers read its OTLP headers and model
// API keys); InheritEnv passes everything.
func TestEnvironment(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/u", "OPENAI_API_KEY=sk-secret",
		"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer x", "TERM=() { evil; }",
		"USER=u", "LANG=C",
	}
	winParent := []string{"=C:=C:\\", "Path=C:\\bin", "SystemRoot=C:\\Windows", "GITHUB_TOKEN=ghp", "TEMP=C:\\t"}
	for _, tc := range []struct {
		name    string
		parent  []string
		extra   map[string]string
		inherit bool
		goos    string
		want    []string
	}{
		{"defaults only", parent, nil, false, "linux", []string{"PATH=/usr/bin", "HOME=/home/u", "USER=u"}},
		{"own variables on top, sorted", parent, map[string]string{"PATH": "/opt/bin", "B": "2", "A": "1"}, false, "linux",
			[]string{"HOME=/home/u", "USER=u", "A=1", "B=2", "PATH=/opt/bin"}},
		{"a secret passed on by name", parent, map[string]string{"OPENAI_API_KEY": "sk-own"}, false, "darwin",
			[]string{"PATH=/usr/bin", "HOME=/home/u", "USER=u", "OPENAI_API_KEY=sk-own"}},
		{"inherit", parent, map[string]string{"LANG": "fr"}, true, "linux",
			[]string{"PATH=/usr/bin", "HOME=/home/u", "OPENAI_API_KEY=sk-secret",
				"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer x", "TERM=() { evil; }", "USER=u", "LANG=fr"}},
		{"nothing to pass", []string{"SECRET=1"}, nil, false, "linux", []string{}},
		{"windows names in any case", winParent, map[string]string{"PATH": "D:\\bin"}, false, "windows",
			[]string{"SystemRoot=C:\\Windows", "TEMP=C:\\t", "PATH=D:\\bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := environment(tc.parent, tc.extra, tc.inherit, tc.goos)
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestClientEnvironment: a real child sees its own variables and the
// defaults, and none of the rest unless InheritEnv.
func TestClientEnvironment(t *testing.T) {
	t.Setenv("FERRY_TEST_SECRET", "sekrit")
	t.Setenv("FERRY_TEST_VAR", "under")
	names := []string{"PATH", "HOME", "FERRY_TEST_VAR", "FERRY_TEST_SECRET"}
	for _, inherit := range []bool{false, true} {
		cmd := helperCommand("echo")
		cmd.Env["FERRY_TEST_VAR"] = "over"
		cmd.InheritEnv = inherit
		s := connect(t, cmd)
		c := jsonrpc2.NewConn(context.Background(), s, nil)
		var env map[string]string
		err := c.CallResult(context.Background(), "env", names, &env)
		c.Close()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "FERRY_TEST_VAR": "over", "FERRY_TEST_SECRET": ""}
		if inherit {
			want["FERRY_TEST_SECRET"] = "sekrit"
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("InheritEnv %v: %s=%q, want %q", inherit, k, env[k], v)
			}
		}
	}
}
