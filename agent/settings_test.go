package agent

import (
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
)

// TestSettingsErrorsInTheirWords (issue 36, item 6): a wrong member of
// the agent's settings is named by its place in the configuration, with
// the members there are, never by the Go type it was read into.
func TestSettingsErrorsInTheirWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"providers":{"openai":{"apikey":"k"}}}`, `c.json: agent: unknown setting "agent.providers.openai.apikey" (there: apiKey, baseURL)`},
		{`{"modle":"x"}`, `c.json: agent: unknown setting "agent.modle" (there: model, system, approval, allow, deny, sampling, maxSteps,`},
		{`{"sampling":{"alow":[]}}`, `unknown setting "agent.sampling.alow" (there: allow, deny)`},
		{`{"maxSteps":"ten"}`, `c.json: agent: "agent.maxSteps": a string where a number is wanted`},
		{`{"providers":{"openai":[]}}`, `"agent.providers.openai": an array where an object is wanted`},
	}
	for _, tt := range tests {
		_, err := parseSettings("c.json", []byte(tt.in), &config.DefaultOptions().Vars)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}
