package fakemodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// View is a request seen the way a brain thinks about it.
type View struct {
	Req *api.ChatRequest
	// System is the system prompt.
	System string
	// Question is the user's last words.
	Question string
	// Results are the tool results since the user's last words, in
	// order: those of the model's previous calls.
	Results []Result
	// Tools are the names of the tools offered.
	Tools []string
}

// Result is a tool's answer the model was given.
type Result struct {
	Name, Content string
	Images        int
}

// imagesNote starts the user message in which the agent passes on the
// images of tool results over OpenAI's API (tool messages hold text only).
const imagesNote = "The images the tools returned:"

// Read makes the view of a request.
func Read(req *api.ChatRequest) View {
	v := View{Req: req}
	for _, t := range req.Tools {
		v.Tools = append(v.Tools, t.Function.Name)
	}
	names := map[string]string{}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
		}
	}
	lastUser := -1
	for i, m := range req.Messages {
		switch {
		case m.Role == "system":
			v.System += m.Content
		case m.Role == "user" && (m.Content != "" && m.Content != imagesNote):
			lastUser = i
		}
	}
	for i := lastUser + 1; i < len(req.Messages) && lastUser >= 0; i++ {
		m := req.Messages[i]
		switch {
		case m.Role == "tool":
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			v.Results = append(v.Results, Result{Name: name, Content: m.Content, Images: len(m.Images)})
		case m.Role == "user" && len(m.Images) > 0 && len(v.Results) > 0:
			v.Results[len(v.Results)-1].Images += len(m.Images)
		}
	}
	if lastUser >= 0 {
		v.Question = req.Messages[lastUser].Content
	}
	return v
}

// lastResults are the results of the model's latest calls: those after
// its last assistant message.
func (v View) lastResults() []Result {
	msgs := v.Req.Messages
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "assistant" {
			break
		}
		if m.Role == "tool" {
			n++
		}
	}
	if n > len(v.Results) {
		n = len(v.Results)
	}
	return v.Results[len(v.Results)-n:]
}

// afterTools reports whether the request ends with tool results.
func (v View) afterTools() bool {
	for i := len(v.Req.Messages) - 1; i >= 0; i-- {
		m := v.Req.Messages[i]
		switch {
		case m.Role == "tool":
			return true
		case m.Role == "user" && (m.Content == imagesNote || m.Content == "" && len(m.Images) > 0):
			continue
		default:
			return false
		}
	}
	return false
}

// resolve finds the offered tool a directive names: exactly, or the one
// tool whose name ends in "__"+name.
func (v View) resolve(name string) string {
	var found []string
	for _, t := range v.Tools {
		if t == name {
			return t
		}
		if strings.HasSuffix(t, "__"+name) {
			found = append(found, t)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return name
}

var directive = regexp.MustCompile(`(?s)call\s+([A-Za-z0-9_.\-/]+)\s*(\{.*?\})?\s*(?:;|\band\b|$)`)

// Directives is the brain of the demo and of most tests: the user says
// what the model does.
//
//	call TOOL {"arg": 1}                 one tool call (TOOL may be the
//	                                     server's name for it)
//	call A {...} and call B {...}        two calls, in parallel
//	slowly ...                           the answer streams slowly
//	anything else                        a short answer about it
//
// After tool results it says what each tool returned. A request without
// tools (a server's sampling request) is answered "sampled: PROMPT".
func Directives(req *api.ChatRequest) Reply {
	v := Read(req)
	var delay time.Duration
	if strings.Contains(v.Question, "slowly") {
		delay = 150 * time.Millisecond
	}
	if v.afterTools() {
		var b strings.Builder
		for _, r := range v.lastResults() {
			content := r.Content
			if len([]rune(content)) > 300 {
				content = string([]rune(content)[:300]) + "…"
			}
			fmt.Fprintf(&b, "%s returned: %s", r.Name, strings.TrimSpace(content))
			if r.Images > 0 {
				fmt.Fprintf(&b, " (and I see %d image(s))", r.Images)
			}
			b.WriteString("\n")
		}
		return Reply{Text: strings.TrimSpace(b.String()), Delay: delay}
	}
	if len(v.Tools) == 0 {
		return Reply{Text: "sampled: " + v.Question}
	}
	var calls []Call
	for _, m := range directive.FindAllStringSubmatch(v.Question, -1) {
		c := Call{Name: v.resolve(m[1]), Args: map[string]any{}}
		if m[2] != "" {
			if err := json.Unmarshal([]byte(m[2]), &c.Args); err != nil {
				return Reply{Text: fmt.Sprintf("I could not read the arguments %s: %v", m[2], err)}
			}
		}
		calls = append(calls, c)
	}
	if len(calls) > 0 {
		return Reply{Calls: calls, Delay: delay}
	}
	return Reply{Text: fmt.Sprintf("I am a scripted model; I know %d tools and see %d earlier messages. "+
		"Say \"call TOOL {...}\" and I call it. You said: %s", len(v.Tools), len(req.Messages)-1, v.Question), Delay: delay}
}
