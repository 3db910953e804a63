package host

import (
	"slices"
	"testing"

	"github.com/ferrymcp/ferry/config"
)

// TestApply: a configuration read again while the host runs starts the
// servers of new entries, stops those of removed ones, restarts changed
// ones and those given up, and leaves the others running (issue 36,
// item 2; b211c63 had no way to change a host's servers but a new host).
func TestApply(t *testing.T) {
	a, b := stdioEntry("a"), stdioEntry("b")
	h := newMemHost(t, []*config.Server{a, b}, &Options{Restart: Backoff{Disable: true}})
	h.mu.Lock()
	h.servers["c"] = testServer("c")
	h.refuse["c"] = true
	h.mu.Unlock()
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	changedB := stdioEntry("b")
	changedB.Args = []string{"--new"}
	steps := []struct {
		name    string
		entries []*config.Server
		refuseC bool
		want    Change
		tools   []string
	}{
		{"add c, which fails", []*config.Server{a, b, stdioEntry("c")}, true,
			Change{Added: []string{"c"}}, []string{"a__echo", "b__echo"}},
		{"c given up is started again", []*config.Server{a, b, stdioEntry("c")}, false,
			Change{Restarted: []string{"c"}}, []string{"a__echo", "b__echo", "c__echo"}},
		{"b changed, from another file", []*config.Server{a, changedB, stdioEntry("c")}, false,
			Change{Restarted: []string{"b"}}, []string{"a__echo", "b__echo", "c__echo"}},
		{"b removed", []*config.Server{a, stdioEntry("c")}, false,
			Change{Removed: []string{"b"}}, []string{"a__echo", "c__echo"}},
		{"nothing changed", []*config.Server{a, stdioEntry("c")}, false,
			Change{}, []string{"a__echo", "c__echo"}},
	}
	for _, st := range steps {
		h.mu.Lock()
		h.refuse["c"] = st.refuseC
		h.mu.Unlock()
		oldB, _ := h.Server("b")
		got, _ := h.Apply(t.Context(), st.entries)
		if !slices.Equal(got.Added, st.want.Added) || !slices.Equal(got.Removed, st.want.Removed) || !slices.Equal(got.Restarted, st.want.Restarted) {
			t.Errorf("%s: change %+v, want %+v", st.name, got, st.want)
		}
		if slices.Contains(got.Removed, "b") || slices.Contains(got.Restarted, "b") {
			if s := oldB.Status().State; s != Stopped {
				t.Errorf("%s: the old b is %v, want stopped", st.name, s)
			}
		}
		tools, _ := h.Tools(t.Context())
		var echoes []string
		for _, tl := range tools {
			if tl.Tool.Name == "echo" {
				echoes = append(echoes, tl.Name)
			}
		}
		if !slices.Equal(echoes, st.tools) {
			t.Errorf("%s: tools %v, want %v", st.name, echoes, st.tools)
		}
	}
	if n := h.openCount("a"); n != 1 {
		t.Errorf("a, never changed, was opened %d times", n)
	}
	if n := h.openCount("b"); n != 2 {
		t.Errorf("b was opened %d times, want 2 (its change)", n)
	}
	if _, err := h.Call(t.Context(), "b__echo", map[string]any{"message": "x"}); KindOf(err) != KindUnknown {
		t.Errorf("a call to a removed server's tool: %v", err)
	}
	res, err := h.Call(t.Context(), "c__echo", map[string]any{"message": "x"})
	if err != nil || res.Content[0].Text != "c: x" {
		t.Errorf("c__echo: %v %+v", err, res)
	}
}
