// Package providers opens a model by its "PROVIDER/MODEL" name:
// "openai/gpt-4o", "anthropic/claude-sonnet-4-5", and the OpenAI-compatible
// endpoints by their usual names ("ollama/llama3.2" at Ollama's local
// address, or any of them at a --base-url). It links every provider's
// client (ferry's own, on the standard library); a program that wants one
// provider may import its package instead.
package providers

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/anthropic"
	"github.com/ferrymcp/ferry/agent/openai"
)

// Options are what a provider needs besides the model's name.
type Options struct {
	// APIKey is the key; empty reads the provider's variable
	// (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...).
	APIKey string
	// BaseURL is where the API is, as the provider's package takes it:
	// ending in /v1 for OpenAI and compatible endpoints, the host for
	// Anthropic.
	BaseURL    string
	HTTPClient *http.Client
	// MaxRetries: see the provider packages.
	MaxRetries int
}

// compatible are OpenAI-compatible providers known by name: their base
// URL and the variable holding their key. A slice of constants, not a
// map: the linker lays it out as static data, where a map literal is
// built by code at every start of every program that links this package
// (the ferry command, for each "ferry tools" as much as for "ferry run").
var compatible = []compatibleProvider{
	{"ollama", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY"},
	{"lmstudio", "http://127.0.0.1:1234/v1", "LMSTUDIO_API_KEY"},
	{"vllm", "http://127.0.0.1:8000/v1", "VLLM_API_KEY"},
	{"llamacpp", "http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY"},
	{"deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"},
	{"dashscope", "https://dashscope.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY"},
	{"openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
}

type compatibleProvider struct{ name, baseURL, keyVar string }

// Names lists the providers Open knows.
func Names() []string {
	return append([]string{"openai", "anthropic"}, compatibleNames()...)
}

// Split reads "PROVIDER/MODEL". The model's own name may hold slashes
// ("openrouter/meta-llama/llama-3.1-8b-instruct").
func Split(spec string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(spec, "/")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("the model must be PROVIDER/MODEL (such as openai/gpt-4o or anthropic/claude-sonnet-4-5), not %q", spec)
	}
	return strings.ToLower(provider), model, nil
}

// Open returns the model named by spec ("PROVIDER/MODEL").
func Open(spec string, o Options) (agent.Model, error) {
	provider, model, err := Split(spec)
	if err != nil {
		return nil, err
	}
	switch provider {
	case "openai":
		return openai.New(openai.Options{Model: model, APIKey: o.APIKey, BaseURL: o.BaseURL, HTTPClient: o.HTTPClient, MaxRetries: o.MaxRetries})
	case "anthropic":
		return anthropic.New(anthropic.Options{Model: model, APIKey: o.APIKey, BaseURL: o.BaseURL, HTTPClient: o.HTTPClient, MaxRetries: o.MaxRetries})
	}
	i := slices.IndexFunc(compatible, func(c compatibleProvider) bool { return c.name == provider })
	if i < 0 {
		return nil, fmt.Errorf("unknown provider %q (known: openai, anthropic, and the OpenAI-compatible %s; "+
			"for another compatible endpoint use openai/MODEL with --base-url)", provider, strings.Join(compatibleNames(), ", "))
	}
	c := compatible[i]
	key, base := o.APIKey, o.BaseURL
	if key == "" {
		key = os.Getenv(c.keyVar)
	}
	if base == "" {
		base = c.baseURL
	}
	if key == "" {
		if !strings.HasPrefix(base, "http://127.0.0.1") && !strings.HasPrefix(base, "http://localhost") {
			return nil, &agent.ModelError{Provider: provider, Kind: agent.ModelAuth, Err: fmt.Errorf("no API key: set %s, or the key in the configuration", c.keyVar)}
		}
		// Never OPENAI_API_KEY, which agent/openai would read: that key
		// is OpenAI's, not this endpoint's.
		key = "none"
	}
	return openai.New(openai.Options{Model: model, APIKey: key, BaseURL: base, HTTPClient: o.HTTPClient, MaxRetries: o.MaxRetries})
}

func compatibleNames() []string {
	var n []string
	for _, c := range compatible {
		n = append(n, c.name)
	}
	return n
}
