package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestApprovalModesAndPermissions: mode plan runs the read-only tools
// and nothing else; the user's permissions (always, ask, never) of a
// tool or of its whole server settle a call before the allow list and
// the mode, a tool's own over its server's (issue 36, item 5).
func TestApprovalModesAndPermissions(t *testing.T) {
	s := newServer("srv")
	server.AddTool(s, &protocol.Tool{Name: "look", Annotations: &protocol.ToolAnnotations{ReadOnlyHint: ptr(true)}},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "seen", nil })
	server.AddTool(s, &protocol.Tool{Name: "wipe"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "wiped", nil })
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	var asked []string
	ask := func(ctx context.Context, q *Question) (Answer, error) {
		asked = append(asked, q.Name)
		return AllowOnce, nil
	}
	policy := func(mode Mode, allow []string, perms map[string]Permission) *Policy {
		p := &Policy{Mode: mode, Allow: allow, Ask: ask}
		for target, perm := range perms {
			p.SetPermission(target, perm)
		}
		return p
	}
	cases := []struct {
		name   string
		policy *Policy
		tool   string
		asked  bool
		reason string // "" when the call runs
	}{
		{"plan runs a read-only tool unasked", policy(Plan, nil, nil), "srv__look", false, ""},
		{"plan refuses the rest", policy(Plan, nil, nil), "srv__wipe", false, "approval mode plan runs only read-only tools"},
		{"plan beats the allow list", policy(Plan, []string{"srv__*"}, nil), "srv__wipe", false, "approval mode plan"},
		{"plan beats always", policy(Plan, nil, map[string]Permission{"srv": Always}), "srv__wipe", false, "approval mode plan"},
		{"never in plan", policy(Plan, nil, map[string]Permission{"srv__look": Never}), "srv__look", false, "say never for srv__look"},
		{"never beats auto", policy(Auto, nil, map[string]Permission{"srv": Never}), "srv__look", false, "say never for srv"},
		{"never beats the allow list", policy(Ask, []string{"srv__*"}, map[string]Permission{"srv__wipe": Never}), "srv__wipe", false, "never"},
		{"always without asking", policy(Ask, nil, map[string]Permission{"srv": Always}), "srv__wipe", false, ""},
		{"ask in mode auto", policy(Auto, nil, map[string]Permission{"srv__wipe": AskEach}), "srv__wipe", true, ""},
		{"ask beats the allow list", policy(Ask, []string{"srv__*"}, map[string]Permission{"srv": AskEach}), "srv__look", true, ""},
		{"the tool's own over its server's", policy(Ask, nil, map[string]Permission{"srv": Never, "srv__look": Always}), "srv__look", false, ""},
		{"ask without anyone to ask", &Policy{Mode: Auto, permissions: map[string]Permission{"srv": AskEach}}, "srv__look", false, "say ask for srv, and there is no terminal to ask"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			m := &scripted{script: func(n int, req *Request) (*Reply, error) {
				if n == 1 {
					return calls(ToolCall{ID: "c", Name: tc.tool, Arguments: `{}`}), nil
				}
				return say("ok"), nil
			}}
			a := &Agent{Model: m, Tools: h, Policy: tc.policy}
			if _, err := a.Run(context.Background(), Text("go")); err != nil {
				t.Fatal(err)
			}
			r := lastResults(t, m.requests()[1])[0]
			if tc.reason == "" && r.IsError || tc.reason != "" && (!r.IsError || !strings.Contains(r.Text(), tc.reason)) {
				t.Errorf("result %q, error %v; want refused for %q", r.Text(), r.IsError, tc.reason)
			}
			if (len(asked) == 1) != tc.asked || len(asked) > 1 {
				t.Errorf("asked about %v", asked)
			}
		})
	}
}

func TestParseModeAndPermission(t *testing.T) {
	for _, s := range []string{"ask", "auto", "plan", "deny"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("yolo"); err == nil || !strings.Contains(err.Error(), "ask, auto, plan or deny") {
		t.Errorf("ParseMode(yolo): %v", err)
	}
	for _, s := range []string{"always", "ask", "never"} {
		if p, err := ParsePermission(s); err != nil || string(p) != s {
			t.Errorf("ParsePermission(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePermission("sometimes"); err == nil {
		t.Error("ParsePermission(sometimes) is no error")
	}
}
