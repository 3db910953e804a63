package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// skillFS is a folder of skills: pdf-processing, with a reference file
// and a tool grant, published by both test servers with their own text.
func skillFS(server string) fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md": {Data: []byte("---\nname: pdf-processing\ndescription: Fill PDF forms (" + server + ")\n" +
			"allowed-tools: echo\n---\n# PDF\nThe body of " + server + "'s skill. Read references/FORMS.md.\n")},
		"pdf-processing/references/FORMS.md": {Data: []byte("the forms of " + server)},
		"big/SKILL.md":                       {Data: []byte("---\nname: big\ndescription: A large skill\n---\n" + strings.Repeat("x", 5000))},
	}
}

// skillServer is a ferry server publishing skillFS, with an echo tool;
// alter changes it afterwards (nil: nothing).
func skillServer(t *testing.T, name string, alter func(*server.Server)) *server.Server {
	t.Helper()
	s := newServer(name)
	addEcho(s)
	if err := skills.Serve(s, nil).AddFS(skillFS(name)); err != nil {
		t.Fatal(err)
	}
	if alter != nil {
		alter(s)
	}
	return s
}

// askLog answers every question with answer, recording each.
type askLog struct {
	mu     sync.Mutex
	answer func(q *Question) Answer
	asked  []string
}

func (l *askLog) ask(_ context.Context, q *Question) (Answer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kind := "tool " + q.Name
	if q.Skill != nil {
		kind = "skill " + q.Server + "/" + q.Skill.Name
		if q.Skill.AllowedTools != nil {
			kind = "grant " + q.Server + "/" + q.Skill.Name + " " + strings.Join(q.Skill.AllowedTools, " ")
		}
	}
	l.asked = append(l.asked, kind)
	return l.answer(q), nil
}

func call(name, args string) ToolCall {
	return ToolCall{ID: "c-" + name + args, Name: name, Arguments: args}
}

// runSkillScript runs a turn in which the model makes each step's calls
// in turn, then answers; it returns the results of every step.
func runSkillScript(t *testing.T, a *Agent, steps [][]ToolCall) [][]*ToolResult {
	t.Helper()
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		if n <= len(steps) {
			return calls(steps[n-1]...), nil
		}
		return say("done"), nil
	}}
	a.Model = m
	if _, err := a.Run(context.Background(), Text("go")); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	var out [][]*ToolResult
	for i := 1; i <= len(steps); i++ {
		out = append(out, lastResults(t, reqs[i]))
	}
	return out
}

func resultText(r *ToolResult) string {
	var b strings.Builder
	for _, p := range r.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}

// TestSkills: the servers' skills reach the model as agents offer skills
// from disk: listed by server, loaded after approval, files read
// verified, from their own server only, allowed-tools ignored unless
// granted, and a same-named skill of another server never in its stead.
func TestSkills(t *testing.T) {
	load := func(server, skill string) ToolCall {
		return call(SkillLoadTool, fmt.Sprintf(`{"server":%q,"skill":%q}`, server, skill))
	}
	read := func(server, skill, path string) ToolCall {
		return call(SkillReadTool, fmt.Sprintf(`{"server":%q,"skill":%q,"path":%q}`, server, skill, path))
	}
	yes := func(*Question) Answer { return AllowOnce }
	tests := []struct {
		name   string
		policy func(*askLog) *Policy
		answer func(*Question) Answer
		limits Limits
		alter  func(*server.Server) // of server docs
		steps  [][]ToolCall
		// want holds, for each step and call, a text the result holds,
		// or "!" and one it must not.
		want      [][]string
		wantAsked []string
	}{
		{name: "loaded after approval, files read verified, per server",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Ask, Ask: l.ask} }, answer: yes,
			steps: [][]ToolCall{{load("docs", "pdf-processing")}, {read("docs", "pdf-processing", "references/FORMS.md"), load("tools", "pdf-processing")}},
			want: [][]string{{`[skill "pdf-processing" of server "docs"`, "The body of docs's skill", "references/FORMS.md (17 bytes)", "allowed-tools: the user let"},
				{"the forms of docs"}, {"The body of tools's skill", "!docs"}},
			wantAsked: []string{"skill docs/pdf-processing", "grant docs/pdf-processing echo", "skill tools/pdf-processing", "grant tools/pdf-processing echo"}},
		{name: "no terminal to ask: refused",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Ask} },
			steps:  [][]ToolCall{{load("docs", "pdf-processing")}},
			want:   [][]string{{"need the user's approval and there is no terminal", "!The body"}}},
		{name: "the user says no",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Ask, Ask: l.ask} }, answer: func(*Question) Answer { return Refuse },
			steps:     [][]ToolCall{{load("docs", "pdf-processing")}},
			want:      [][]string{{"the user denied it", "!The body"}},
			wantAsked: []string{"skill docs/pdf-processing"}},
		{name: "mode deny",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Deny, Ask: l.ask} },
			steps:  [][]ToolCall{{load("docs", "pdf-processing")}},
			want:   [][]string{{"skill loads are denied", "!The body"}}},
		{name: "allowed-tools ignored unless granted",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Ask, Ask: l.ask} },
			answer: func(q *Question) Answer {
				if q.Skill != nil && q.Skill.AllowedTools != nil {
					return Refuse
				}
				if q.Skill != nil {
					return AllowOnce
				}
				return Refuse
			},
			steps:     [][]ToolCall{{load("docs", "pdf-processing")}, {call("docs__echo", `{"message":"hi"}`)}},
			want:      [][]string{{"allowed-tools: ignored", "The body of docs"}, {"the user denied it"}},
			wantAsked: []string{"skill docs/pdf-processing", "grant docs/pdf-processing echo", "tool docs__echo"}},
		{name: "a grant covers its own server's tools only",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Ask, Ask: l.ask} },
			answer: func(q *Question) Answer {
				if q.Skill != nil {
					return AllowOnce
				}
				return Refuse
			},
			steps:     [][]ToolCall{{load("docs", "pdf-processing")}, {call("docs__echo", `{"message":"hi"}`)}, {call("tools__echo", `{"message":"hi"}`)}},
			want:      [][]string{{"The body of docs"}, {"echo: hi"}, {"the user denied it"}},
			wantAsked: []string{"skill docs/pdf-processing", "grant docs/pdf-processing echo", "tool tools__echo"}},
		{name: "approved for the session: asked once",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Ask, Ask: l.ask} },
			answer: func(q *Question) Answer {
				if q.Skill != nil && q.Skill.AllowedTools == nil {
					return AllowSession
				}
				return Refuse
			},
			steps:     [][]ToolCall{{load("docs", "pdf-processing")}, {load("docs", "pdf-processing")}},
			want:      [][]string{{"The body of docs"}, {"The body of docs"}},
			wantAsked: []string{"skill docs/pdf-processing", "grant docs/pdf-processing echo", "grant docs/pdf-processing echo"}},
		{name: "a file read before the skill is loaded, or one it does not list",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Auto} },
			steps: [][]ToolCall{{read("docs", "pdf-processing", "references/FORMS.md")}, {load("docs", "pdf-processing")},
				{read("docs", "pdf-processing", "../big/SKILL.md"), read("docs", "pdf-processing", "secret.txt")}},
			want: [][]string{{"is not loaded; load it with skills__load first"}, {"The body of docs"},
				{"outside the skill", "!xxxx"}, {"not in the manifest"}}},
		{name: "content that does not match the manifest is not used",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Auto} },
			alter: func(s *server.Server) {
				uri := "skill://pdf-processing/references/FORMS.md"
				s.AddResource(&protocol.Resource{URI: uri, Name: uri}, func(context.Context, *server.Request, string) (*protocol.ReadResourceResult, error) {
					return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "tampered forms!!!"}}}, nil
				})
			},
			steps: [][]ToolCall{{load("docs", "pdf-processing")}, {read("docs", "pdf-processing", "references/FORMS.md")}},
			want:  [][]string{{"The body of docs"}, {"skill verification failed", "digest mismatch", "!tampered"}}},
		{name: "unknown server or skill",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Auto} },
			steps:  [][]ToolCall{{load("nope", "pdf-processing"), load("docs", "nope")}},
			want:   [][]string{{`no server named "nope" publishes skills`}, {`server "docs" has no skill "nope"`}}},
		{name: "the body is bounded",
			policy: func(l *askLog) *Policy { return &Policy{Mode: Auto} }, limits: Limits{MaxResultTokens: 250},
			steps: [][]ToolCall{{load("docs", "big")}},
			want:  [][]string{{"over the budget of 250 tokens", "The whole result is kept", "!" + strings.Repeat("x", 1000)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startHost(t, map[string]*server.Server{"docs": skillServer(t, "docs", tt.alter), "tools": skillServer(t, "tools", nil)}, nil)
			log := &askLog{answer: tt.answer}
			ev := &events{}
			a := &Agent{Tools: h, Skills: HostSkills(h), Policy: tt.policy(log), Limits: tt.limits, OnEvent: ev.add, ResultDir: t.TempDir()}
			results := runSkillScript(t, a, tt.steps)
			var flat []*ToolResult
			for _, step := range results {
				flat = append(flat, step...)
			}
			if len(flat) != len(tt.want) {
				t.Fatalf("%d results, want %d", len(flat), len(tt.want))
			}
			for i, wants := range tt.want {
				got := resultText(flat[i])
				for _, w := range wants {
					if not, ok := strings.CutPrefix(w, "!"); ok {
						if strings.Contains(got, not) {
							t.Errorf("result %d holds %q:\n%s", i, not, got)
						}
					} else if !strings.Contains(got, w) {
						t.Errorf("result %d lacks %q:\n%s", i, w, got)
					}
				}
			}
			if got := strings.Join(log.asked, "; "); got != strings.Join(tt.wantAsked, "; ") {
				t.Errorf("asked:\n  %s\nwant:\n  %s", got, strings.Join(tt.wantAsked, "; "))
			}
		})
	}
}

// TestSkillCatalog: the model is told every server's skills by server
// and name, same-named ones both, and the user is warned of the
// collision; without skills, no skill tools.
func TestSkillCatalog(t *testing.T) {
	h := startHost(t, map[string]*server.Server{"docs": skillServer(t, "docs", nil), "tools": skillServer(t, "tools", nil), "plain": newServer("plain")}, nil)
	m := &scripted{script: func(int, *Request) (*Reply, error) { return say("ok"), nil }}
	ev := &events{}
	a := &Agent{Model: m, Tools: h, Skills: HostSkills(h), Policy: &Policy{Mode: Auto}, OnEvent: ev.add}
	if _, err := a.Run(context.Background(), Text("hi")); err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, s := range m.requests()[0].Tools {
		if s.Name == SkillLoadTool {
			desc = s.Description
		}
	}
	for _, want := range []string{"- docs: pdf-processing: Fill PDF forms (docs)\n", "- tools: pdf-processing: Fill PDF forms (tools)\n", "- docs: big: A large skill\n"} {
		if !strings.Contains(desc, want) {
			t.Errorf("the description of %s lacks %q:\n%s", SkillLoadTool, want, desc)
		}
	}
	warned := false
	for _, e := range ev.of(EventWarning) {
		warned = warned || strings.Contains(e.Text, `skill "pdf-processing" is published by servers docs, tools`)
	}
	if !warned {
		t.Errorf("no warning of the collision: %v", ev.of(EventWarning))
	}

	plain := startHost(t, map[string]*server.Server{"plain": newServer("plain")}, nil)
	m2 := &scripted{script: func(int, *Request) (*Reply, error) { return say("ok"), nil }}
	b := &Agent{Model: m2, Tools: plain, Skills: HostSkills(plain), Policy: &Policy{Mode: Auto}}
	if _, err := b.Run(context.Background(), Text("hi")); err != nil {
		t.Fatal(err)
	}
	if n := len(m2.requests()[0].Tools); n != 0 {
		t.Errorf("without skills the model is offered %d tools", n)
	}
}
