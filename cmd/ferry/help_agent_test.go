package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/providers"
)

// TestHelpAgent (issue 36, item 6): "ferry help agent" documents every
// setting of the "agent" member and every provider, and the global help
// points to it.
func TestHelpAgent(t *testing.T) {
	code, out, errOut := runFerry(t, "", "help", "agent")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := append(members(t, agent.Settings{}), members(t, agent.ProviderSettings{})...)
	want = append(want, providers.Names()...)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("ferry help agent lacks %q:\n%s", w, out)
		}
	}
	if _, out, _ := runFerry(t, "", "help"); !strings.Contains(out, `"ferry help agent"`) {
		t.Errorf("ferry help does not point to ferry help agent:\n%s", out)
	}
}

// members are the JSON names of a settings struct's fields.
func members(t *testing.T, v any) []string {
	t.Helper()
	var names []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, `"`+name+`"`)
		}
	}
	return names
}
